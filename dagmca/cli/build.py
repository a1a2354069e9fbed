"""`dagmca build PATH…`: one session per passage, into one store.

Every setting's option applies, as to `run`, with the paths and the build's own options
in place of the passage, session id and report folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dagmca import aio
from dagmca.cli import options as o
from dagmca.cli import run as run_command
from dagmca.cli.console import err, out
from dagmca.cli.progress import BuildProgress
from dagmca.config import SessionConfig
from dagmca.errors import BuildInterrupted, EndpointError, UserError
from dagmca.llm.factory import check_backend
from dagmca.store import open_store, resolve_store

if TYPE_CHECKING:
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import Passage

DEGRADED_EXIT = run_command.DEGRADED_EXIT

Paths = Annotated[
    list[Path],
    typer.Argument(
        help="Passages: text files, folders (recursively, *.txt and *.md), JSONL files of {id, text}."
    ),
]
ParallelSessions = Annotated[
    int | None,
    typer.Option(
        "--parallel-sessions",
        min=1,
        max=64,
        help="Sessions at once (default: 1 on the local model, else half of --concurrency, at least 2)",
    ),
]
CrossRevisits = Annotated[
    int,
    typer.Option(
        "--cross-revisits",
        min=0,
        help="Revisit branches the build may start in earlier sessions when a new passage makes "
        "their open stubs relevant (answered stubs are not capped)",
    ),
]


def parallel_default(cfg: SessionConfig) -> int:
    """1 on the local model (its server is the bottleneck: parallel sessions only queue
    there), else enough sessions to keep the calls in flight busy."""
    return 1 if cfg.llm == "local" else max(2, cfg.concurrency // 2)


@o.with_settings()
def build(
    cfg: SessionConfig,
    paths: Paths,
    store: o.Store = None,
    quiet: o.Quiet = False,
    parallel_sessions: ParallelSessions = None,
    cross_revisits: CrossRevisits = 3,
    as_json: o.AsJSON = False,
) -> None:
    """Debate many passages into one graph: a session per passage, in parallel under one
    rate limit; each new passage is checked against the earlier sessions' open stubs.
    Run it again to resume: finished passages are skipped, unfinished ones resumed."""
    quiet = quiet or as_json
    from dagmca import runner
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import collect

    passages, skipped = collect(paths, cfg.max_passage_bytes)
    for s in skipped:
        err.print(f"dagmca: skipped {s.source}: {s.reason}", markup=False, highlight=False, soft_wrap=True)
    if not passages:
        raise UserError("no passage to build", "give text files, folders of them, or a JSONL file")
    check_backend(cfg)
    location = resolve_store(store)
    parallel = parallel_sessions or parallel_default(cfg)
    with open_store(location, create=True) as graph_store:
        graph_store.init_schema()
        job = Build(
            cfg,
            graph_store,
            passages,
            reports=lambda session: runner.reports_dir(location, session, None),
            parallel=parallel,
            cross_revisits=cross_revisits,
        )
        todo = job.plan()
        if todo:
            _run(job, todo, cfg, quiet)
        _summary(job, len(skipped), as_json)
    # as `run`: a session that failed or ended degraded is exit 4
    if any(oc.status == "failed" or oc.detail == "degraded" for oc in job.outcomes.values()):
        raise typer.Exit(DEGRADED_EXIT)


def _run(job: Build, todo: list[Passage], cfg: SessionConfig, quiet: bool) -> None:
    from dagmca.llm.base import EndpointDown
    from dagmca.llm.factory import open_backend
    from dagmca.similarity import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.warm_up()  # loads on its own thread while the backend starts
    try:
        backend = open_backend(cfg)
        display = None if quiet else BuildProgress(err, job)
        try:
            if display is not None:
                display.start()
            aio.run(job.run(todo, backend.client, embedder))
        except KeyboardInterrupt:
            raise BuildInterrupted(
                "build interrupted: every finished turn is kept", "run the same command again to resume it"
            ) from None
        except EndpointDown as exc:
            raise EndpointError(str(exc), "every finished turn is kept; run the same command again") from None
        finally:
            if display is not None:
                display.stop()
            backend.stop()
    finally:
        embedder.close()


def _summary(job: Build, skipped: int, as_json: bool) -> None:
    rows = [
        {
            "passage": oc.passage.source,
            "session": oc.passage.id,
            "status": oc.status,
            "session_status": oc.detail,
            "ran": oc.ran,
            "calls": oc.calls,
            "cost_usd": round(oc.cost_usd, 6),
        }
        for oc in job.outcomes.values()
    ]
    links = [{"kind": k.kind, "passage": k.passage, "session": k.session, "node": k.node} for k in job.links]
    limiter = job.limiter
    totals = {
        **job.totals(),
        "rate_limited": limiter.throttled if limiter is not None else 0,
        "stubs_checked_across": job.checked,
        "skipped_inputs": skipped,
        "worker": job.worker,
    }
    if as_json:
        out.print_json(json.dumps({"passages": rows, "links": links, "totals": totals}))
        return
    from rich.table import Table

    table = Table(title="build", title_justify="left")
    for column in ("passage", "session", "status", "calls", "cost"):
        table.add_column(column)
    for r in rows:
        status = f"{r['status']} ({r['session_status']})" if r["session_status"] else str(r["status"])
        table.add_row(str(r["passage"]), str(r["session"]), status, str(r["calls"]), f"${r['cost_usd']:.4f}")
    out.print(table)
    out.print(
        f"{totals['calls']} LLM calls ({totals['cache_hits']} answered from the cache), {totals['tokens']:,} "
        f"tokens, ${totals['cost_usd']:.4f}; {totals['rate_limited']} rate-limited replies"
    )
    out.print(f"across passages: {job.checked} open stubs of earlier sessions checked against a new passage")
    if links:
        out.print("cross-passage links:")
        for k in job.links:
            out.print(f"  {k.passage} {k.kind} {k.node} (session {k.session})", markup=False, highlight=False)
    else:
        out.print("cross-passage links: none made")
