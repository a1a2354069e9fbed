"""`dagmca`: the commands, and the one place where every way a command can end becomes
an exit code: a user's mistake is one line, never a traceback."""

from __future__ import annotations

import contextlib
import os
import sys

import typer
from typer.exceptions import TyperException

from dagmca import tracing
from dagmca.cli import agents, ask, build, compare, config, db, estimate, ledger, read, run
from dagmca.cli import eval as eval_command
from dagmca.cli import mcp as mcp_command
from dagmca.cli.console import err, out
from dagmca.errors import BuildInterrupted, DagmcaError, EndpointError, Interrupted

app = typer.Typer(
    name="dagmca",
    help="Turn a text passage into a DAG of LLM debates stored in a graph database.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Store administration.", no_args_is_help=True)
app.add_typer(db_app, name="db")
cache_app = typer.Typer(help="The response cache and the call log.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
app.add_typer(config.app, name="config")

# spending LLM calls
app.command()(run.run)
app.command()(build.build)
app.command()(estimate.estimate)
app.command()(compare.compare)
app.command("eval")(eval_command.eval_)
app.command()(run.resume)
# reading
app.command()(read.sessions)
app.command()(read.show)
app.command()(read.export)
app.command()(read.status)
app.command()(read.metrics)
app.command()(read.check)
app.command()(agents.agents)
app.command()(run.revisit)
app.command()(ledger.ledger)
app.command()(ask.ask)
# administration
app.command()(db.doctor)
db_app.command("init")(db.db_init)
cache_app.command("prune")(db.cache_prune)
app.command()(db.push)
app.command()(db.delete)
app.command()(read.query)
app.command("mcp")(mcp_command.mcp)


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
        err.print(
            f"dagmca: interrupted; session {exc.session} keeps every finished turn in {exc.location}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        err.print(
            f"dagmca: `dagmca resume {exc.session}` continues it without repeating a finished call",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return 130
    except DagmcaError as exc:
        err.print(f"dagmca: error: {exc.line()}", markup=False, highlight=False, soft_wrap=True)
        return exit_code(exc)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err.print("dagmca: aborted")
        return 130
    except TyperException as exc:  # typer's (vendored click) usage errors
        message = exc.format_message()
        if type(exc).__name__ == "NoArgsIsHelpError":
            out.print(message, markup=False, highlight=False)
            return 2
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        err.print(f"dagmca: error: {message}{hint}", markup=False, highlight=False, soft_wrap=True)
        return int(getattr(exc, "exit_code", 2))
    return returned if isinstance(returned, int) else 0


def entry() -> None:
    """The `dagmca` program: `main`, then out of the process without tearing down its
    objects one by one (as mypy's `hard_exit` does). Every command has closed its store,
    joined its threads and written its files by then; what is left is freeing memory
    the exit frees anyway, which took a second after a large run (torch alone 0.4 s)."""
    code = main()
    # os._exit runs no exit handlers, the tracer's included: its batched spans go now
    tracing.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say on it
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
