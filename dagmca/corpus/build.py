"""`dagmca build`: one session per passage, into one store.

Sessions run in parallel (`parallel` at a time) on one event loop, sharing the
backend (and so its rate limiter), the embedder, the store's thread, the concurrency
limit and the build's spend. After each passage's session, in passage order, the open
stubs of the store's earlier sessions are judged against it (`link`). A passage is
finished when its session ended and it was linked (`linked_at` on its Session node):
a rerun skips it without a call, resumes an unfinished one from the cache, starts the
rest.

Workers on other processes or machines can share the store: a passage is claimed in
one transaction before it runs (renewed until it is linked, expiring when its worker
dies), and so is the right to link, so that two workers never change one session at
once. The claims are the sessions' leases (`dagmca.store.lease`): a passage's session
opens under its passage's claim, and the earlier sessions a link step changes under
the link claim."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.corpus.link import (
    LINK_CLAIM,
    BuildSessions,
    Link,
    Step,
    StepResult,
    finished_others,
    link_step,
    mark_linked,
)
from dagmca.corpus.sources import Passage
from dagmca.debate.events import Event, PhaseChanged, TurnRecorded
from dagmca.graph import PassageStatus, SessionNode, SessionStatus, node_from_record
from dagmca.llm.limiter import RateLimiter
from dagmca.llm.metered import MeteredLLM
from dagmca.store.base import GraphStore
from dagmca.store.lease import Claims, holder_id
from dagmca.workspace import BaseWorkspace, ClientLike
from dagmca.workspace.session import SessionMode, SharedResources, run_and_report
from dagmca.workspace.stored import stored_config


@dataclass
class Outcome:
    """What became of one passage in this build."""

    passage: Passage
    status: PassageStatus = PassageStatus.WAITING
    detail: str = ""  # the session's own status, or why it was skipped or failed
    phase: str = ""
    turns: int = 0
    ran: bool = False  # this worker ran (or resumed) its session
    meters: list[MeteredLLM] = field(default_factory=list)
    ended: float | None = None

    @property
    def calls(self) -> int:
        return sum(m.meter.calls for m in self.meters)

    @property
    def cost_usd(self) -> float:
        return sum(m.meter.cost_usd for m in self.meters)


class PassageEvents:
    """A session's events, as far as the build's display shows them."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def emit(self, event: Event) -> None:
        if isinstance(event, PhaseChanged):
            self.outcome.phase = event.phase
        elif isinstance(event, TurnRecorded):
            self.outcome.turns += 1


class Build:
    def __init__(
        self,
        cfg: SessionConfig,
        store: GraphStore,
        passages: list[Passage],
        *,
        reports: Callable[[str], Path],
        parallel: int = 1,
        cross_revisits: int = 3,
        worker: str | None = None,
    ) -> None:
        self.cfg = cfg
        self.store = store
        self.passages = passages
        self.reports = reports
        self.parallel = parallel
        self.cross_revisits = cross_revisits
        self.worker = worker or holder_id()
        self.outcomes = {p.id: Outcome(p) for p in passages}
        self.links: list[Link] = []
        self.checked = 0  # earlier sessions' open stubs judged against a new passage
        # what the next link step on each session waits for: the last step on it, or, for
        # a passage's own session, its marking as linked (a step rewrites the Session node)
        self._chain: dict[str, asyncio.Task[Any]] = {}
        self.limiter: RateLimiter | None = None
        self.started = time.monotonic()

    # -- before any call ---------------------------------------------------------------
    def plan(self) -> list[Passage]:
        """The passages that need work; the others' outcomes say why not."""
        todo: list[Passage] = []
        for p in self.passages:
            node = self.store.get_node(p.id)
            outcome = self.outcomes[p.id]
            if node is None:
                todo.append(p)
            elif node.props.get("passage_sha256") != p.sha256:
                outcome.status = PassageStatus.SKIPPED
                outcome.detail = f"session {p.id} in the store debates another text"
            elif SessionStatus.of(node).ended() and node.props.get("linked_at"):
                outcome.status = PassageStatus.FINISHED_EARLIER
                outcome.detail = SessionStatus.of(node)
            else:
                todo.append(p)
        return todo

    # -- the run -----------------------------------------------------------------------
    async def run(self, todo: list[Passage], ws: BaseWorkspace, client: ClientLike | None = None) -> None:
        """Every passage of `todo`, each session opened in `ws` on the backend of the
        build's settings (or `client`); traced (--otel), one trace whose build span is
        the parent of every session's."""
        cfg = self.cfg
        attrs = {"dagmca.passages": len(todo)}
        with tracing.group("build", otel=cfg.otel, content=cfg.otel_content, attributes=attrs):
            backend = await ws.backend(cfg, client)
            self.limiter = getattr(backend.client, "limiter", None)
            claims = Claims(ws.store, self.worker)
            await self._run(todo, BuildSessions(ws, backend, SharedResources.of(ws.store, cfg), claims))

    async def _run(self, todo: list[Passage], sessions: BuildSessions) -> None:
        slots = asyncio.Semaphore(self.parallel)
        tasks = {p.id: asyncio.create_task(self._session(p, sessions, slots), name=p.id) for p in todo}
        links: list[asyncio.Task[None]] = []
        try:
            # a claim lost stops the build: nothing more is written under it, and the loss
            # is the error
            async with sessions.claims.guarding():
                # Linked in passage order, each when the passages before it ended; the steps
                # on one earlier session run in that order, those on different ones at once.
                for p in todo:
                    await tasks[p.id]
                    if self.outcomes[p.id].status is PassageStatus.LINKING:
                        links.append(await self._schedule_link(p, sessions))
                await asyncio.gather(*links)
        finally:
            for task in [*tasks.values(), *links, *self._chain.values()]:
                task.cancel()
            await asyncio.gather(*tasks.values(), *links, *self._chain.values(), return_exceptions=True)
            # every claim still held (a passage left linking when its linking stopped, the
            # link claim) is given up: another worker takes the passage over at once
            await sessions.claims.release_all()
            await sessions.store.flush()

    async def _session(
        self,
        p: Passage,
        sessions: BuildSessions,
        slots: asyncio.Semaphore,
    ) -> None:
        outcome = self.outcomes[p.id]
        async with slots:
            store, claims = sessions.store, sessions.claims
            # the passage's session id is its key: a `resume` of that session is refused
            # meanwhile; renewed until the passage is linked (or given up), not only while
            # it runs
            if not await claims.take(p.id):
                outcome.status, outcome.detail = PassageStatus.CLAIMED, ""
                return
            try:
                node = await store.aread(lambda s: s.get_node(p.id))
                if node is not None and node.props.get("linked_at"):  # by another worker meanwhile
                    outcome.status, outcome.detail = PassageStatus.FINISHED_EARLIER, SessionStatus.of(node)
                    await claims.release(p.id)
                    return
                if node is not None and SessionStatus.of(node).ended():
                    # ended meanwhile (another worker), or earlier and not yet linked
                    outcome.status, outcome.detail = PassageStatus.LINKING, SessionStatus.of(node)
                    return
                cfg = stored_config(node) if node is not None else self.cfg
                outcome.status, outcome.ran = PassageStatus.RUNNING, True
                mode = SessionMode.RESUME if node is not None else SessionMode.NEW
                async with sessions.open(cfg, p.id, p.text, mode, PassageEvents(outcome)) as opened:
                    outcome.meters.append(opened.state.handles.llm)
                    result = await run_and_report(
                        opened.state,
                        title=p.title,
                        model=opened.state.handles.llm.model,
                        out_dir=self.reports(p.id),
                    )
                status = result.session.status
                outcome.status = PassageStatus.LINKING if status.ended() else PassageStatus.FAILED
                outcome.detail = status
            except BaseException:
                outcome.status = PassageStatus.FAILED
                await claims.release(p.id)
                raise
            finally:
                outcome.ended = time.monotonic()
            if outcome.status is PassageStatus.FAILED:
                await claims.release(p.id)

    async def _schedule_link(self, p: Passage, sessions: BuildSessions) -> asyncio.Task[None]:
        """Start judging every earlier finished session's open stubs against `p`: one
        step per session, after the steps of earlier passages on that session. The
        build's revisit branches are offered to the sessions in passage and session
        order as the steps are made, so the graph does not depend on which step
        finishes first; an offer a session does not take is not made again."""
        store = sessions.store
        # the right to change other sessions, store-wide
        while not await sessions.claims.take(LINK_CLAIM):
            await asyncio.sleep(1.0)  # another worker is linking
        record = await store.aread(lambda s: s.get_node(p.id))
        against = node_from_record(record) if record is not None else None
        if not isinstance(against, SessionNode):
            raise ValueError(f"no session {p.id} to link")
        later = {q.id for q in self.passages[self.passages.index(p) + 1 :]}
        steps = []
        for other in finished_others(await store.aread(lambda s: s.sessions()), p, later):
            base = stored_config(other)
            offered = min(base.max_revisits, self.cross_revisits)
            self.cross_revisits -= offered
            step = Step(p, against, other, base.model_copy(update={"max_revisits": offered}))
            task = asyncio.create_task(self._step(self._chain.get(other.id), step, sessions))
            self._chain[other.id] = task
            steps.append(task)
        finish = asyncio.create_task(self._finish_link(p, against, steps, sessions))
        self._chain[p.id] = finish
        return finish

    async def _step(
        self,
        before: asyncio.Task[Any] | None,
        step: Step,
        sessions: BuildSessions,
    ) -> StepResult:
        if before is not None:
            await before
        outcome = self.outcomes[step.passage.id]
        return await link_step(
            step,
            sessions,
            reports=self.reports,
            events=PassageEvents(outcome),
            meters=outcome.meters,
        )

    async def _finish_link(
        self, p: Passage, against: SessionNode, steps: list[asyncio.Task[StepResult]], sessions: BuildSessions
    ) -> None:
        outcome = self.outcomes[p.id]
        try:
            for result in await asyncio.gather(*steps):
                self.links += result.links
                self.checked += result.checked
            await mark_linked(sessions, against, p)
            outcome.status = PassageStatus.DONE if outcome.ran else PassageStatus.FINISHED_EARLIER
        finally:
            await sessions.claims.release(p.id)

    # -- what the display and the summary read --------------------------------------------
    def totals(self) -> dict[str, int | float]:
        """Calls made, calls answered from the cache, tokens and cost, over every session
        and cross-passage step of this run."""
        meters = [m.meter for o in self.outcomes.values() for m in o.meters]
        return {
            "calls": sum(m.calls for m in meters),
            "cache_hits": sum(m.cache_hits for m in meters),
            "tokens": sum(m.usage.total for m in meters),
            "cost_usd": round(sum(m.cost_usd for m in meters), 6),
        }

    def eta_s(self) -> float | None:
        """Seconds left, from the passages this run finished so far."""
        outcomes = self.outcomes.values()
        ran = [o for o in outcomes if o.ran and o.ended is not None and o.status is PassageStatus.DONE]
        left = sum(1 for o in outcomes if o.status.pending())
        if not ran or not left:
            return None
        per = (time.monotonic() - self.started) / len(ran)
        return per * left
