"""The lifecycle of one session: its metered client, its state and its trace, opened
around the workspace's store thread, embedder and backend, and closed cleanly however
the session ends; and the reports written beside the graph when it does.

`Workspace.open_session` (`dagmca.workspace.opening`) is the one way in: a new run, a
resume, a revisit, a ledger trace, a corpus build's sessions and an evaluation's all
open their session there."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink, NoEvents
from dagmca.debate.session import RevisitOutcome, SessionResult, revisit_session, run_session
from dagmca.debate.state import SessionState
from dagmca.graph import GraphNode, ModelRole
from dagmca.llm.base import LLMClient
from dagmca.llm.factory import context_window
from dagmca.llm.gate import Gate
from dagmca.llm.metered import Budget, Meter, MeteredLLM, Pool
from dagmca.llm.routing import routes_of
from dagmca.llm.tokens import ContextWindow, TokenCounter
from dagmca.prompts.budget import PromptBudget
from dagmca.reports import writers
from dagmca.reports.live import LiveStatus
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore


class SessionMode(StrEnum):
    """What a session is opened for, which says what must be stored under its id and how
    its earlier runs count against its budgets."""

    NEW = "new"  # nothing ran before: nothing is stored under its id
    # a session cut short, taken up again (not done): the earlier runs' calls are replayed
    # from the cache, charged as replayed
    RESUME = "resume"
    # a session whose run ended, worked on again (a revisit, a ledger trace, a build's link
    # step): what its earlier runs spent is charged at once
    REVISIT = "revisit"


@dataclass
class SharedResources:
    """What the sessions of a group (a build's, an eval's) share: one store thread, one
    concurrency limit and one spend against the group's budgets (the rate limiter is
    the backend's). A session opened alone gets its own limit and spend."""

    store: BackgroundStore
    gate: Gate
    pool: Pool

    @classmethod
    def of(cls, store: BackgroundStore, cfg: SessionConfig) -> SharedResources:
        """A group under `cfg`'s concurrency and budgets."""
        return cls(store, Gate(cfg.concurrency), Pool(Budget.of(cfg)))

    @classmethod
    def alone(cls, store: BackgroundStore, cfg: SessionConfig) -> SharedResources:
        """A session's own limit; its budgets are its meter's."""
        return cls(store, Gate(cfg.concurrency), Pool(Budget()))


@dataclass(frozen=True)
class OpenSession:
    """A session ready to run: its state, and the model its backend serves."""

    state: SessionState
    model: str


class Display(EventSink, Protocol):
    """A live view of a run (the CLI's progress): it receives the events, and reads the
    meter between them."""

    def start(self, meter: Meter) -> None: ...
    def stop(self) -> None: ...


def role_window(cfg: SessionConfig, role: ModelRole, client: LLMClient) -> ContextWindow:
    """The context window of `role`'s model: its own setting, else what its endpoint
    reports or a known model's. The session's --context-window is the session's model's:
    a role on another model does not inherit it."""
    own = cfg.role(role)
    set_by_role = (r := cfg.roles.get(role)) is not None and r.context_window is not None
    if own.model != cfg.model and not set_by_role:
        own = own.model_copy(update={"context_window": None})
    return context_window(own, routes_of(client)[role].client)


@contextlib.asynccontextmanager
async def session_state(
    cfg: SessionConfig,
    *,
    client: LLMClient,
    session_id: str,
    passage: str,
    embedder: Embedder,
    shared: SharedResources,
    mode: SessionMode = SessionMode.NEW,
    events: EventSink | None = None,
    question: str | None = None,
) -> AsyncIterator[SessionState]:
    """The state of one session around `client`, after a pre-flight call: a down
    endpoint fails here, before any cost. On the way out every queued write reaches
    the store; the store's thread, the backend and the embedder stay open: they are
    the workspace's."""
    tracing.require(cfg.otel)  # before anything is opened
    background = shared.store
    llm = MeteredLLM.for_session(
        cfg,
        client,
        calls=background,
        session=session_id,
        budget=Budget.of(cfg),
        # a resumed session replays every finished call, whatever its first run said
        # about reading the cache
        replaying=mode is SessionMode.RESUME,
        gate=shared.gate,
        pool=shared.pool,
    )
    # the session's span, around the pre-flight too: a trace's calls are all the run's
    traced: dict[str, str] = {
        "dagmca.backend": cfg.llm,
        "dagmca.model": client.model,
        "dagmca.protocol": cfg.protocol,
        "dagmca.run": mode.value,
    }
    with tracing.session(session_id, otel=cfg.otel, content=cfg.otel_content, attributes=traced):
        try:
            if mode is not SessionMode.NEW:
                spent = await background.aread(lambda s: s.calls(session_id))
                llm.restore(spent, replayed=mode is SessionMode.RESUME)
            await llm.ping()
            window = context_window(cfg, client)
            counter = TokenCounter.calibrated(passage, await client.count_tokens(passage))
            budget = PromptBudget(
                counter=counter,
                window=window.tokens,
                turn=cfg.turn_tokens(),
                flag=cfg.flag_tokens(),
                synthesis=cfg.synthesis_tokens(),
                final=cfg.final_tokens(),
            )
            # the judge's prompts fit its own model's window, which may be smaller or
            # larger than the debaters'
            judged = role_window(cfg, ModelRole.JUDGE, client)
            judge_budget = replace(budget, window=judged.tokens) if judged.tokens != window.tokens else None
            yield SessionState(
                config=cfg,
                session_id=session_id,
                store=background,
                llm=llm,
                embedder=embedder,
                passage=passage,
                question=question,
                budget=budget,
                window=window,
                events=events or NoEvents(),
                judge_budget=judge_budget,
            )
        finally:
            await background.flush()


async def run_and_report(state: SessionState, *, title: str, model: str, out_dir: Path) -> SessionResult:
    """A whole session, with status.json and events.jsonl as it goes and every report
    when it ends, however it ends."""
    live = LiveStatus(state, out_dir, state.handles.events)
    state.handles.events = live
    try:
        return await run_session(state, title=title, model=model)
    finally:
        writers.write_session(state, out_dir)
        live.close()
        state.handles.events = live.inner


async def revisit_and_report(
    state: SessionState, *, context: str, out_dir: Path, against: GraphNode | None = None
) -> RevisitOutcome:
    try:
        return await revisit_session(state, context=context, against=against)
    finally:
        writers.write_session(state, out_dir)
