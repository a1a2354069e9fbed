"""`dagmca`: the commands, and the one place where every way a command can end becomes
an exit code: a user's mistake is one line, never a traceback."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from typing import Annotated

import typer
from typer.exceptions import TyperException

from dagmca import __version__, tracing
from dagmca.cli.console import err, noted, said
from dagmca.cli.lazy import Lazy, LazyGroup
from dagmca.errors import BuildInterrupted, DagmcaError, EndpointError, Interrupted


class Commands(LazyGroup):
    """Every command, imported only when it is used: `dagmca query` does not import what
    `dagmca run` needs, and `dagmca --help` imports none of them."""

    entries = (
        # spending LLM calls
        Lazy("run", "run:run", "Debate a passage, or a question about one (or alone)."),
        Lazy("build", "build:build", "Debate many passages into one graph, a session each."),
        Lazy("estimate", "estimate:estimate", "Project a run's calls, tokens and cost; spend nothing."),
        Lazy("compare", "compare:compare", "Run protocols on the same passage and compare them."),
        Lazy("eval", "eval:eval_", "Run arms over tasks: accuracy, judged wins, paired tests, cost."),
        Lazy("judge-check", "judge_check:judge_check", "Check an eval's judge: position, length, reference."),
        Lazy("swarm", "swarm:swarm", "Route checked tasks to agents that learn; compare the routers."),
        Lazy("stability", "stability:stability", "Which findings recur across sessions of one passage."),
        Lazy("resume", "run:resume", "Finish a session that was killed, interrupted or stopped."),
        # reading
        Lazy("sessions", "read:sessions", "List the sessions in the store."),
        Lazy("show", "read:show", "Print a session (or the whole store) as a tree."),
        Lazy("export", "read:export", "Export a session or the store for visualization and tools."),
        Lazy("status", "read:status", "Where a session is: phase, debates, calls, cost, last event."),
        Lazy("metrics", "read:metrics", "Emergence metrics computed from the stored graph."),
        Lazy("check", "read:check", "Check the graph schema's invariants."),
        Lazy("agents", "agents:agents", "List the agents that persist across sessions."),
        Lazy("revisit", "run:revisit", "Re-check a finished session's open stubs with new context."),
        Lazy("ledger", "ledger:ledger", "Each claim of a session's answer, its origin and sources."),
        Lazy("ask", "ask:ask", "Ask the stored graph a question: cited answer and dissent."),
        # administration
        Lazy("doctor", "db:doctor", "Check that a run can start."),
        Lazy("setup-local", "db:setup_local", "Install the local default's server and bundled model."),
        Lazy("push", "db:push", "Copy a session from the embedded store into Neo4j."),
        Lazy("delete", "db:delete", "Remove a session from the store."),
        Lazy("query", "read:query", "Run Cypher against the store and print the rows."),
        Lazy("mcp", "mcp:mcp", "Serve the store over MCP (stdio, or streamable HTTP)."),
        Lazy("db", "db:db_app", "Store administration."),
        Lazy("cache", "db:cache_app", "The response cache and the call log."),
        Lazy("config", "config:app", "The settings: what each one is, and where its value comes from."),
    )


app = typer.Typer(
    name="dagmca",
    cls=Commands,
    help="Turn a text passage into a DAG of LLM debates stored in a graph database.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(asked: bool) -> None:
    if asked:
        said(f"dagmca {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print dagmca's version and exit."),
    ] = False,
) -> None:
    # a group with a callback and no registered command is still a group (typer makes a
    # lone command of an app with one command, and refuses an app with none)
    pass


# The exit code of each kind of error (the library's errors carry none): 2 bad input,
# 3 an endpoint or database that cannot be used, 130 stopped by the user. The first
# class in this order that an error is an instance of decides.
EXIT_CODES: tuple[tuple[type[DagmcaError], int], ...] = (
    (EndpointError, 3),
    (BuildInterrupted, 130),
    (Interrupted, 130),
    (DagmcaError, 2),
)


def exit_code(exc: DagmcaError) -> int:
    return next(code for kind, code in EXIT_CODES if isinstance(exc, kind))


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors are one line and an exit code, never a traceback."""
    command = typer.main.get_command(app)
    try:
        # standalone_mode=False: click returns a raised Exit's code instead of exiting.
        returned = command.main(args=argv, prog_name="dagmca", standalone_mode=False)
    except Interrupted as exc:
        noted(f"dagmca: interrupted; session {exc.session} keeps every finished turn in {exc.location}")
        noted(
            f"dagmca: `dagmca resume {exc.session} --store {shlex.quote(exc.location)}` continues it without "
            "repeating a finished call"
        )
        return 130
    except DagmcaError as exc:
        noted(f"dagmca: error: {exc.line()}")
        return exit_code(exc)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err.print("dagmca: aborted")
        return 130
    except TyperException as exc:  # typer's (vendored click) usage errors
        message = exc.format_message()
        if type(exc).__name__ == "NoArgsIsHelpError":
            said(message)
            return 2
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        noted(f"dagmca: error: {message}{hint}")
        return int(getattr(exc, "exit_code", 2))
    return returned if isinstance(returned, int) else 0


def entry() -> None:
    """The `dagmca` program: `main`, then out of the process without tearing down its
    objects one by one (as mypy's `hard_exit` does). Every command has closed its store,
    joined its threads and written its files by then; what is left is freeing memory
    the exit frees anyway, which took a second after a large run (torch alone 0.4 s)."""
    code = main()
    # os._exit runs no exit handlers, the tracer's included: its batched spans go now,
    # within a few seconds, and what no collector took is said in one line
    dropped = tracing.flush()
    if dropped is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"dagmca: {dropped}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say on it
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
