"""A corpus build in a workspace (`Workspace.build`): the passages collected from the
sources, the build run on the workspace's store thread, embedder and backend, and what
became of each passage, as a typed result."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from dagmca.config import SessionConfig
from dagmca.corpus.build import Build
from dagmca.corpus.sources import Passage, collect
from dagmca.errors import UserError
from dagmca.graph import PassageStatus, SessionStatus, Strict
from dagmca.workspace import BaseWorkspace, ClientLike


class BuildWatcher(Protocol):
    """A live view of a build (the CLI's progress): started with the running build,
    whose outcomes it reads, and stopped when the build ends."""

    def start(self, job: Build) -> None: ...
    def stop(self) -> None: ...


class PassageOutcome(Strict):
    """What became of one passage: `status` is done (this build ran it), finished
    earlier, claimed by another worker, failed or skipped; `session_status` the
    session's own status (or why it was skipped)."""

    passage: str  # where it came from: a file, or `file.jsonl#id`
    session: str
    status: PassageStatus
    session_status: str
    ran: bool
    calls: int
    cost_usd: float


class CrossLink(Strict):
    """A relation the build made between a new passage and an earlier session: an open
    stub `answered` by it, or a branch `revisited` because of it."""

    kind: str
    passage: str
    session: str
    node: str


class SkippedSource(Strict):
    """An input the build could not use, and why."""

    source: str
    reason: str


class BuildTotals(Strict):
    """What the build's sessions and cross-passage steps spent in this run."""

    calls: int
    cache_hits: int
    tokens: int
    cost_usd: float
    rate_limited: int  # replies the endpoint refused for its rate limit
    stubs_checked_across: int  # earlier sessions' open stubs judged against a new passage
    skipped_inputs: int
    worker: str


class BuildResult(Strict):
    passages: list[PassageOutcome]
    links: list[CrossLink]
    skipped: list[SkippedSource]
    totals: BuildTotals

    @property
    def degraded(self) -> bool:
        """Whether a session failed or ended degraded (`dagmca build` then exits 4)."""
        return any(
            p.status is PassageStatus.FAILED or p.session_status == SessionStatus.DEGRADED
            for p in self.passages
        )


def parallel_default(cfg: SessionConfig) -> int:
    """1 on the local model (its server is the bottleneck: parallel sessions only queue
    there), else enough sessions to keep the calls in flight busy."""
    return 1 if cfg.llm == "local" else max(2, cfg.concurrency // 2)


async def run_build(
    ws: BaseWorkspace,
    cfg: SessionConfig,
    paths: list[Path],
    client: ClientLike | None,
    parallel: int | None,
    cross_revisits: int,
    watch: BuildWatcher | None,
) -> BuildResult:
    passages, skipped = collect_sources(paths, cfg.max_passage_bytes)
    job = Build(
        cfg,
        ws.store,  # the workspace's thread: the build writes through it and leaves it open
        passages,
        reports=ws.reports_dir,
        parallel=parallel or parallel_default(cfg),
        cross_revisits=cross_revisits,
    )
    todo = await asyncio.to_thread(job.plan)  # its reads wait on the store's thread
    if todo:
        if watch is not None:
            watch.start(job)
        try:
            await job.run(todo, ws, client)
        finally:
            if watch is not None:
                watch.stop()
    return result_of(job, skipped)


def collect_sources(paths: list[Path], max_bytes: int) -> tuple[list[Passage], list[SkippedSource]]:
    """The passages of `paths` (text files, folders of *.txt and *.md, JSONL files of
    {id, text}) and the inputs that cannot be used; a UserError when there is none."""
    passages, skipped = collect(paths, max_bytes)
    if not passages:
        raise UserError("no passage to build", "give text files, folders of them, or a JSONL file")
    return passages, [SkippedSource(source=s.source, reason=s.reason) for s in skipped]


def result_of(job: Build, skipped: list[SkippedSource]) -> BuildResult:
    totals = job.totals()
    limiter = job.limiter
    return BuildResult(
        passages=[
            PassageOutcome(
                passage=oc.passage.source,
                session=oc.passage.id,
                status=oc.status,
                session_status=oc.detail,
                ran=oc.ran,
                calls=oc.calls,
                cost_usd=round(oc.cost_usd, 6),
            )
            for oc in job.outcomes.values()
        ],
        links=[CrossLink(kind=k.kind, passage=k.passage, session=k.session, node=k.node) for k in job.links],
        skipped=skipped,
        totals=BuildTotals(
            calls=int(totals["calls"]),
            cache_hits=int(totals["cache_hits"]),
            tokens=int(totals["tokens"]),
            cost_usd=float(totals["cost_usd"]),
            rate_limited=limiter.throttled if limiter is not None else 0,
            stubs_checked_across=job.checked,
            skipped_inputs=len(skipped),
            worker=job.worker,
        ),
    )
