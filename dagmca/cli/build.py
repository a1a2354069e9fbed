"""`dagmca build PATH…`: one session per passage, into one store.

Every setting's option applies, as to `run`, with the paths and the build's own options
in place of the passage, session id and report folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dagmca.cli import options as o
from dagmca.cli import run as run_command
from dagmca.cli.console import err, noted, out, said
from dagmca.cli.progress import BuildProgress
from dagmca.config import SessionConfig
from dagmca.errors import BuildInterrupted
from dagmca.llm.factory import check_backend
from dagmca.store import resolve_store

if TYPE_CHECKING:
    from dagmca.api import BuildResult
    from dagmca.corpus.build import Build

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


class LiveBuild:
    """The build's progress on stderr, made when the build starts (it reads the job)."""

    def __init__(self) -> None:
        self.view: BuildProgress | None = None

    def start(self, job: Build) -> None:
        self.view = BuildProgress(err, job)
        self.view.start()

    def stop(self) -> None:
        if self.view is not None:
            self.view.stop()


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
    from dagmca.api.building import collect_sources
    from dagmca.api.sync import in_workspace

    # bad input fails before a store is made; what cannot be used is said first
    for s in collect_sources(paths, cfg.max_passage_bytes)[1]:
        noted(f"dagmca: skipped {s.source}: {s.reason}")
    check_backend(cfg)
    try:
        result = in_workspace(
            resolve_store(store),
            lambda ws: ws.build(
                paths,
                settings=cfg,
                parallel=parallel_sessions,
                cross_revisits=cross_revisits,
                watch=None if quiet else LiveBuild(),
            ),
            embedder=cfg.embedder,
        )
    except KeyboardInterrupt:
        raise BuildInterrupted(
            "build interrupted: every finished turn is kept", "run the same command again to resume it"
        ) from None
    _summary(result, as_json)
    if result.degraded:  # as `run`: a session that failed or ended degraded is exit 4
        raise typer.Exit(DEGRADED_EXIT)


def _summary(result: BuildResult, as_json: bool) -> None:
    if as_json:
        body = result.model_dump(mode="json", exclude={"skipped"})
        out.print_json(json.dumps(body))
        return
    from rich.table import Table

    totals = result.totals
    table = Table(title="build", title_justify="left")
    for column in ("passage", "session", "status", "calls", "cost"):
        table.add_column(column)
    for r in result.passages:
        status = f"{r.status} ({r.session_status})" if r.session_status else r.status
        table.add_row(r.passage, r.session, status, str(r.calls), f"${r.cost_usd:.4f}")
    out.print(table)
    out.print(
        f"{totals.calls} LLM calls ({totals.cache_hits} answered from the cache), {totals.tokens:,} "
        f"tokens, ${totals.cost_usd:.4f}; {totals.rate_limited} rate-limited replies"
    )
    checked = totals.stubs_checked_across
    out.print(f"across passages: {checked} open stubs of earlier sessions checked against a new passage")
    if result.links:
        out.print("cross-passage links:")
        for k in result.links:
            said(f"  {k.passage} {k.kind} {k.node} (session {k.session})")
    else:
        out.print("cross-passage links: none made")
