"""`Workspace`: dagmca as a library. One store, its writer thread and one embedder,
opened once and shared by every session run through it, on the caller's event loop.

    async with dagmca.Workspace("graph.db") as ws:
        result = await ws.run(passage=text, settings={"llm": "fake"})
        graph = await ws.graph(result.id)

Sessions may run at once (`asyncio.gather`): each has its own budget and meter; they
share the store's thread, the embedder and, per backend settings, one backend (so one
local model server, one rate limiter). Nothing here prints or exits: failures are
`dagmca.errors` exceptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from dagmca.api.backends import Backends, ClientLike
from dagmca.api.results import RevisitResult, RoleShare, RunResult, Spend
from dagmca.ask.models import Answer
from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink
from dagmca.debate.session import SessionResult
from dagmca.debate.state import SessionState
from dagmca.errors import EndpointError, SettingsError, UserError
from dagmca.llm.base import EndpointDown
from dagmca.llm.gate import Gate
from dagmca.llm.metered import Budget, MeteredLLM, Pool
from dagmca.models import NodeKind, SessionNode, node_from_record
from dagmca.passage import check_text, title_of
from dagmca.runner import (
    Display,
    Shared,
    open_state,
    reports_dir,
    revisit_and_report,
    run_and_report,
    stored_config,
)
from dagmca.runner import new_session_id as _new_session_id
from dagmca.similarity import Embedder, MiniLMEmbedder
from dagmca.store import open_store, require_session, resolve_store
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.store.graph import load_graph

T = TypeVar("T")
SettingsLike = SessionConfig | Mapping[str, Any] | None
BUDGETS = ("max_llm_calls", "max_tokens", "max_cost_usd")
MAX_QUESTION_BYTES = 20_000  # a question, not a passage: longer text belongs in the passage


def settings_from(settings: SettingsLike, overrides: Mapping[str, Any] | None = None) -> SessionConfig:
    """A SessionConfig from what a caller handed in: a SessionConfig, or a mapping of
    setting names, with `overrides` on top. A bad name or value is a SettingsError."""
    base = settings.model_dump() if isinstance(settings, SessionConfig) else dict(settings or {})
    try:
        return SessionConfig.model_validate({**base, **dict(overrides or {})})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "settings"
        raise SettingsError(f"setting {key}: {first['msg']}", "see `dagmca config show`") from None


def spend_of(llm: MeteredLLM) -> Spend:
    m = llm.meter
    return Spend(
        calls=m.calls,
        cache_hits=m.cache_hits,
        failures=m.failures,
        refused=m.refused,
        prompt_tokens=m.usage.prompt_tokens,
        completion_tokens=m.usage.completion_tokens,
        cost_usd=m.cost_usd,
        cached_tokens=m.usage.cached_tokens,
        invalid_outputs=m.invalid_outputs,
        retries=m.retries,
        repairs=m.repairs,
        faults=dict(sorted(m.faults.items())),
        earlier_calls=m.earlier_calls,
        earlier_tokens=m.earlier_tokens,
        earlier_cost_usd=m.earlier_cost_usd,
        model=llm.model,
        prices=llm.prices.source,
        by_role=[RoleShare(r.role, r.model, r.calls, r.usage.total, r.cost_usd) for r in llm.by_role()],
    )


class Workspace:
    """A store opened for running and reading sessions. `store`: a file path (the
    embedded SQLite store, created when missing), a bolt:// or neo4j:// URI, or an open
    `GraphStore` (for instance `Neo4jStore(driver)` around your own neo4j driver), which
    the workspace then does not close. `embedder`: your own (the bundled MiniLM when
    None). `reports`: the folder that gets a folder per session's report files (default:
    sessions/ beside the store)."""

    def __init__(
        self,
        store: str | Path | GraphStore | None = None,
        *,
        embedder: Embedder | None = None,
        reports: str | Path | None = None,
    ) -> None:
        self._given_store = store if isinstance(store, GraphStore) else None
        self.location = (
            store.location if isinstance(store, GraphStore) else resolve_store(str(store) if store else None)
        )
        self._given_embedder = embedder
        self._reports = Path(reports) if reports is not None else None
        self._store: GraphStore | None = None
        self._background: BackgroundStore | None = None
        self._embedder: Embedder | None = None
        self._backends = Backends()

    # -- lifecycle ---------------------------------------------------------------------
    async def __aenter__(self) -> Workspace:
        given = self._given_store
        store = (
            given if given is not None else await asyncio.to_thread(open_store, self.location, create=True)
        )
        try:
            await asyncio.to_thread(store.init_schema)
        except BaseException:
            if self._given_store is None:
                store.close()
            raise
        self._store = store
        self._background = BackgroundStore(store)
        self._embedder = self._given_embedder or MiniLMEmbedder()
        self._embedder.warm_up()  # loads on its own thread while the first backend starts
        self._embedder.keep_in(self._background)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Every queued write reaches the store; then the backends stop, the embedder
        (when the workspace made it) and the store (when it opened it) close."""
        background, self._background = self._background, None
        try:
            if background is not None:
                await background.flush()
        finally:
            await self._backends.aclose()
            if self._embedder is not None:
                self._embedder.keep_in(None)
                if self._given_embedder is None:
                    self._embedder.close()
                self._embedder = None
            try:
                if background is not None:
                    background.close()  # the thread stops; the store itself stays open
            finally:
                store, self._store = self._store, None
                if store is not None and self._given_store is None:  # a store handed in stays theirs
                    store.close()

    def _opened(self) -> tuple[BackgroundStore, Embedder]:
        if self._background is None or self._embedder is None:
            raise UserError("the workspace is not open", "use `async with dagmca.Workspace(...) as ws:`")
        return self._background, self._embedder

    def reports_dir(self, session: str) -> Path:
        return (
            self._reports / session
            if self._reports is not None
            else reports_dir(self.location, session, None)
        )

    # -- running -----------------------------------------------------------------------
    async def run(
        self,
        passage: str | None = None,
        *,
        question: str | None = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        session: str | None = None,
        title: str | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Any,
    ) -> RunResult:
        """Debate `passage` as a new session and return when it ends. With a `question`
        the debates address it and the final answer carries a short `answer`; the
        passage is then optional. `settings` and keyword `overrides` are SessionConfig's
        settings (`llm="openai", model=...`); `client`: an `openai.AsyncOpenAI` client or
        any `dagmca.llm.LLMClient` to use instead of the one the settings would build;
        `out_dir`: the session's report folder (default: one under `reports`)."""
        cfg = settings_from(settings, overrides)
        if passage is None and question is None:
            raise UserError("nothing to debate", "give a passage, a question, or both")
        text = check_text(passage, cfg.max_passage_bytes) if passage is not None else ""
        asked = check_text(question, MAX_QUESTION_BYTES, "question") if question is not None else None
        background, _ = self._opened()
        session_id = session or _new_session_id(text or asked or "")
        if await background.aread(lambda s: s.has_session(session_id)):
            raise UserError(f"session {session_id!r} already exists in {self.location}", "choose another id")
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session_id)
        name = title or title_of(asked or text, session_id)

        async def work(state: SessionState, model: str) -> RunResult:
            result = await run_and_report(state, title=name, model=model, out_dir=folder)
            return self._result(result, state, folder)

        return await self._session(cfg, session_id, text, client, events, None, work, asked)

    async def resume(
        self,
        session: str,
        *,
        settings: SessionConfig | None = None,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Any,
    ) -> RunResult:
        """Finish a session that was killed, interrupted or stopped: finished calls are
        replayed from the cache, the rest asked. `overrides` may move the endpoint or
        raise a budget; a session that spent its budget needs a raised one. `settings`:
        the whole settings to resume with instead of the stored ones (the CLI resolves
        them itself)."""
        node, cfg = await self._stored(session, overrides, settings)
        if str(node.props.get("status", "")) == "done":
            raise UserError(f"session {session} is already done; nothing to resume")
        text, title = str(node.props["passage"]), str(node.props.get("title", session))
        asked = str(node.props["question"]) if node.props.get("question") else None
        out_dir = Path(out_dir) if out_dir is not None else self.reports_dir(session)

        async def work(state: SessionState, model: str) -> RunResult:
            result = await run_and_report(state, title=title, model=model, out_dir=out_dir)
            return self._result(result, state, out_dir)

        return await self._session(cfg, session, text, client, events, "replay", work, asked)

    async def revisit(
        self,
        session: str,
        *,
        passage: str | None = None,
        settings: SessionConfig | None = None,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Any,
    ) -> RevisitResult:
        """Judge a finished session's open stubs against new context (`passage`, else
        its own final answer), explore the relevant ones and integrate again."""
        node, cfg = await self._stored(session, overrides, settings)
        background, _ = self._opened()
        new_text = check_text(passage, cfg.max_passage_bytes) if passage is not None else None
        final = await background.aread(lambda s: s.get_node(f"{session}/final"))
        context = new_text or (str(final.props.get("text", "")) if final else "")
        if not context:
            raise UserError(f"session {session} has no final answer to revisit against", "pass a passage")
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session)
        asked = str(node.props["question"]) if node.props.get("question") else None

        async def work(state: SessionState, model: str) -> RevisitResult:
            r = await revisit_and_report(state, context=context, out_dir=folder)
            spend = spend_of(state.llm)
            return RevisitResult(session, r.checked, list(r.superseded), list(r.explored), r.final, spend)

        text = new_text or str(node.props["passage"])
        return await self._session(cfg, session, text, client, events, "charge", work, asked)

    def _result(self, result: SessionResult, state: SessionState, out_dir: Path) -> RunResult:
        spend = spend_of(state.llm)
        problems = list(result.session.problems)
        return RunResult(result.session, result.final, spend, self.location, out_dir, problems)

    async def _stored(
        self, session: str, overrides: Mapping[str, Any], settings: SessionConfig | None = None
    ) -> tuple[Any, SessionConfig]:
        background, _ = self._opened()
        node = await background.aread(lambda s: require_session(s, session))
        stored = stored_config(node)
        given = {k: v for k, v in overrides.items() if v is not None}
        cfg = settings if settings is not None else settings_from(stored, given)
        raised = any(k in given for k in BUDGETS) or any(
            getattr(cfg, k) != getattr(stored, k) for k in BUDGETS
        )
        if str(node.props.get("status", "")) == "budget_exhausted" and not raised:
            raise UserError(
                f"session {node.id} ended with its budget spent; nothing more can be asked within it",
                "raise a budget: max_llm_calls, max_tokens or max_cost_usd",
            )
        return node, cfg

    async def _session(
        self,
        cfg: SessionConfig,
        session_id: str,
        passage: str,
        client: ClientLike | None,
        events: EventSink | None,
        earlier: Any,
        work: Callable[[SessionState, str], Awaitable[T]],
        question: str | None = None,
    ) -> T:
        background, embedder = self._opened()
        backend = await self._backends.get(cfg, client)
        # the session's own concurrency limit and budgets; the store's thread is the workspace's
        shared = Shared(store=background, gate=Gate(cfg.concurrency), pool=Pool(Budget()))
        try:
            async with open_state(
                cfg,
                background,
                client=backend.client,
                session_id=session_id,
                passage=passage,
                embedder=embedder,
                events=events,
                earlier=earlier,
                shared=shared,
                question=question,
            ) as state:
                # a live view (the CLI's progress) also reads the meter between events
                live = callable(getattr(events, "start", None)) and callable(getattr(events, "stop", None))
                display = cast(Display, events) if live else None
                if display is not None:
                    display.start(state.llm.meter)
                try:
                    return await work(state, backend.model)
                finally:
                    if display is not None:
                        display.stop()
        except EndpointDown as exc:
            raise EndpointError(
                str(exc), f"every finished turn is kept; `dagmca resume {session_id}` continues it"
            ) from None

    # -- asking ------------------------------------------------------------------------
    async def ask(
        self,
        question: str,
        *,
        sessions: list[str] | None = None,
        settings: SettingsLike = None,
        retrieve_only: bool = False,
        **overrides: Any,
    ) -> Answer:
        """Ask the stored graph (`sessions`, else every session): an answer citing the
        nodes it rests on, every citation checked, with the dissent beside it. The
        answer is the `final` role's model's; `retrieve_only` asks no model."""
        from dagmca.ask import retrieve
        from dagmca.ask.client import answer_with_settings

        cfg = settings_from(settings, overrides)
        asked = check_text(question, MAX_QUESTION_BYTES, "question")
        background, embedder = self._opened()
        found = await retrieve(background, asked, embedder=embedder, sessions=sessions)
        if retrieve_only or not found.hits:
            return found.as_answer()
        return await answer_with_settings(cfg, background, found)

    # -- reading -----------------------------------------------------------------------
    async def sessions(self) -> list[SessionNode]:
        """The store's sessions, oldest first."""
        background, _ = self._opened()
        records = await background.aread(lambda s: s.sessions())
        return [node for r in records if isinstance(node := node_from_record(r), SessionNode)]

    async def session(self, session: str) -> SessionNode:
        background, _ = self._opened()
        record = await background.aread(lambda s: require_session(s, session))
        node = node_from_record(record)
        assert isinstance(node, SessionNode) and record.kind is NodeKind.SESSION
        return node

    async def graph(self, session: str) -> Any:
        """The session as a `networkx.MultiDiGraph`: node attributes are kind, labels,
        session, created_at and the properties; edges carry their type."""
        background, _ = self._opened()
        await background.aread(lambda s: require_session(s, session))
        return await background.aread(lambda s: load_graph(s, session))
