"""The lifecycle of a session: the LLM backend, the store's own thread, the meter, the
embedder and the state, started once and stopped cleanly however the run ends; and the
reports written beside the graph when it does.

`open_state` is what the Python API's workspace runs each session in; tests use it too
(they hand in a scripted client and a test embedder)."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import ValidationError

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink, NoEvents
from dagmca.debate.session import RevisitOutcome, SessionResult, revisit_session, run_session
from dagmca.debate.state import SessionState
from dagmca.errors import UserError
from dagmca.graph import GraphNode, ModelRole, NodeRecord
from dagmca.llm.base import LLMClient
from dagmca.llm.factory import context_window
from dagmca.llm.gate import Gate
from dagmca.llm.metered import Budget, Meter, MeteredLLM, Pool, role_terms
from dagmca.llm.routing import routes_of
from dagmca.llm.tokens import ContextWindow, TokenCounter
from dagmca.prompts.budget import PromptBudget
from dagmca.reports import writers
from dagmca.reports.live import LiveStatus
from dagmca.similarity import Embedder
from dagmca.store import DEFAULT_STORE
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.store.target import is_bolt_uri

T = TypeVar("T")
Earlier = Literal["replay", "charge"] | None
Work = Callable[[SessionState, str], Awaitable[T]]


@dataclass
class SharedResources:
    """What the sessions of a build share: one store thread, one concurrency limit, one
    spend against the build's budgets (the rate limiter is the backend's)."""

    store: BackgroundStore
    gate: Gate
    pool: Pool


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
async def open_state(
    cfg: SessionConfig,
    store: GraphStore,
    *,
    client: LLMClient,
    session_id: str,
    passage: str,
    embedder: Embedder,
    events: EventSink | None = None,
    earlier: Earlier = None,
    shared: SharedResources | None = None,
    question: str | None = None,
) -> AsyncIterator[SessionState]:
    """The state of one session around `client`, after a pre-flight call: a down
    endpoint fails here, before any cost. `earlier`: what the session's earlier runs
    spent counts against its budgets — charged as their calls are replayed (resume) or
    all at once (revisit). On the way out every queued write reaches the store before
    the store's thread stops. `shared`: what this session shares with the others of a
    build (the store's thread, the concurrency limit, the build's spend), which it then
    neither owns nor closes."""
    tracing.require(cfg.otel)  # before anything is opened
    background = shared.store if shared is not None else BackgroundStore(store)
    # vectors kept with the replies: a resumed or repeated session encodes nothing twice
    embedder.keep_in(background)
    llm = MeteredLLM(
        client,
        concurrency=cfg.concurrency,
        budget=Budget(cfg.max_llm_calls, cfg.max_tokens, cfg.max_cost_usd),
        # each role at its own model's prices, its cut replies continued unless it is local
        terms=role_terms(cfg, client),
        cache=background,
        # A resumed session replays every finished call from the cache, whatever the
        # first run said about reading it.
        read_cache=cfg.cache or earlier == "replay",
        record=lambda call: background.record_calls([call]),
        session=session_id,
        down_after=cfg.endpoint_down_after,
        gate=shared.gate if shared is not None else None,
        pool=shared.pool if shared is not None else None,
    )
    # the session's span, around the pre-flight too: a trace's calls are all the run's
    run = {"replay": "resume", "charge": "revisit"}.get(earlier or "", "new")
    traced: dict[str, str] = {
        "dagmca.backend": cfg.llm,
        "dagmca.model": client.model,
        "dagmca.protocol": cfg.protocol,
        "dagmca.run": run,
    }
    with tracing.session(session_id, otel=cfg.otel, content=cfg.otel_content, attributes=traced):
        try:
            if earlier is not None:
                spent = await background.aread(lambda s: s.calls(session_id))
                llm.restore(spent, replayed=earlier == "replay")
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
            try:
                await background.flush()
            finally:
                if shared is None:
                    embedder.keep_in(None)
                    background.close()
                    await llm.aclose()


async def run_and_report(state: SessionState, *, title: str, model: str, out_dir: Path) -> SessionResult:
    """A whole session, with status.json and events.jsonl as it goes and every report
    when it ends, however it ends."""
    live = LiveStatus(state, out_dir, state.events)
    state.events = live
    try:
        return await run_session(state, title=title, model=model)
    finally:
        writers.write_session(state, out_dir)
        live.close()
        state.events = live.inner


async def revisit_and_report(
    state: SessionState, *, context: str, out_dir: Path, against: GraphNode | None = None
) -> RevisitOutcome:
    try:
        return await revisit_session(state, context=context, against=against)
    finally:
        writers.write_session(state, out_dir)


# -- sessions by id ---------------------------------------------------------------------
def reports_dir(location: str, session: str, out_dir: Path | None) -> Path:
    """--out, else sessions/<id>/ beside the embedded store (under .dagmca/ for Neo4j)."""
    root = DEFAULT_STORE.parent if is_bolt_uri(location) else Path(location).parent
    return out_dir or root / "sessions" / session


def new_session_id(text: str) -> str:
    """The time, the text's hash and a random part: two runs of one text started in the
    same second get two ids (and a clash of ids is refused under the session's lease)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-")
    return stamp + hashlib.sha256(text.encode()).hexdigest()[:6] + "-" + secrets.token_hex(2)


def stored_config(node: NodeRecord) -> SessionConfig:
    """The settings a session ran with, as its Session node keeps them."""
    try:
        return SessionConfig.model_validate_json(str(node.props["config"]))
    except (KeyError, ValidationError) as exc:
        raise UserError(f"session {node.id} has no usable settings: {exc}") from None
