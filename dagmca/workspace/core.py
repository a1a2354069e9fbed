"""`BaseWorkspace`: sessions in one store. The store, its writer thread and one
embedder are opened once and shared by every session run through it, on the caller's
event loop; `dagmca.Workspace` adds what spans many sessions (build, eval, ask).

Sessions may run at once (`asyncio.gather`): each has its own budget and meter; they
share the store's thread, the embedder and, per backend settings, one backend (so one
local model server, one rate limiter). Nothing here prints or exits: failures are
`dagmca.errors` exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

from dagmca.config import SessionConfig
from dagmca.config.overrides import Overrides
from dagmca.debate.events import EventSink
from dagmca.debate.session import SessionResult, ledger_session
from dagmca.errors import EndpointError, UserError
from dagmca.graph import NodeKind, NodeRecord
from dagmca.llm.base import EndpointDown
from dagmca.llm.factory import Backend
from dagmca.passage import check_text, title_of
from dagmca.similarity import Embedder
from dagmca.similarity.choose import make_embedder
from dagmca.store import open_store, require_session, resolve_store
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.workspace.backends import Backends, ClientLike, Handed
from dagmca.workspace.inputs import (
    BUDGETS,
    MAX_QUESTION_BYTES,
    SettingsLike,
    given_store,
    settings_from,
    spend_of,
)
from dagmca.workspace.lease import continuable, finished, held
from dagmca.workspace.reading import Reading
from dagmca.workspace.results import LedgerReport, RevisitResult, RunResult
from dagmca.workspace.session import (
    Display,
    OpenSession,
    SessionMode,
    SharedResources,
    revisit_and_report,
    run_and_report,
    session_state,
)
from dagmca.workspace.stored import new_session_id, reports_dir, stored_config

if TYPE_CHECKING:
    import neo4j

W = TypeVar("W", bound="BaseWorkspace")


class BaseWorkspace(Reading):
    """A store opened for running and reading sessions (use `dagmca.Workspace`, which
    adds builds, evaluations and asking). `store`: a file path (the embedded SQLite
    store, created when missing), a bolt:// or neo4j:// URI, your own `neo4j.Driver`
    (on `database`, else the server's default), or an open `GraphStore`; a driver or a
    store handed in stays open, the caller's. `embedder`: your own, left open too, or
    the name of one (`--embedder`'s; None: $DAGMCA_EMBEDDER's, else the default).
    `reports`: the folder that gets a folder per session's report files (default:
    sessions/ beside the store)."""

    def __init__(
        self,
        store: str | Path | GraphStore | neo4j.Driver | None = None,
        *,
        embedder: Embedder | str | None = None,
        reports: str | Path | None = None,
        database: str | None = None,
    ) -> None:
        given = None if isinstance(store, str | Path | None) else given_store(store, database)
        self._given_store = given
        self.location = given.location if given is not None else resolve_store(str(store) if store else None)
        self._given_embedder = embedder if isinstance(embedder, Embedder) else None
        self._embedder_name = embedder if isinstance(embedder, str) else None  # one of --embedder's
        self._reports = Path(reports) if reports is not None else None
        self._store: GraphStore | None = None
        self._background: BackgroundStore | None = None
        self._embedder: Embedder | None = None
        self._backends = Backends()

    # -- lifecycle ---------------------------------------------------------------------
    async def __aenter__(self: W) -> W:
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
        self._embedder = self._given_embedder or make_embedder(self._embedder_name)
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

    @property
    def embedder(self) -> Embedder:
        """The embedder every session of the workspace shares."""
        return self._opened()[1]

    async def backend(self, settings: SessionConfig, client: ClientLike | None = None) -> Backend | Handed:
        """The LLM backend for `settings`: the workspace's one for those backend settings
        (started on first use, stopped when the workspace closes), or `client` wrapped.
        Do not close it: the workspace does."""
        self._opened()
        return await self._backends.get(settings, client)

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
        **overrides: Unpack[Overrides],
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
        session_id = session or new_session_id(text or asked or "")
        # under the session's lease, so that no other process makes the same id meanwhile
        async with held(background, session_id):
            found = await background.aread(lambda s: s.get_node(session_id))
            if found is not None:
                if session is None or found.kind is not NodeKind.SESSION:
                    raise UserError(f"{session_id!r} already exists in {self.location}", "choose another id")
                continuable(found, cfg, (text, asked), self.location)  # else says what differs
                return await self._resume(found, cfg, client, events, out_dir)
            folder = Path(out_dir) if out_dir is not None else self.reports_dir(session_id)
            name = title or title_of(asked or text, session_id)

            opened = self.open_session(
                cfg, session_id=session_id, passage=text, question=asked, client=client, events=events
            )
            async with opened as s:
                result = await run_and_report(s.state, title=name, model=s.model, out_dir=folder)
                return self._result(result, s, folder)

    async def resume(
        self,
        session: str,
        *,
        settings: SessionConfig | None = None,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Unpack[Overrides],
    ) -> RunResult:
        """Finish a session that was killed, interrupted or stopped: finished calls are
        replayed from the cache, the rest asked. `overrides` may move the endpoint or
        raise a budget; a session that spent its budget needs a raised one. `settings`:
        the whole settings to resume with instead of the stored ones (the CLI resolves
        them itself)."""
        async with held(self._opened()[0], session):
            node, cfg = await self._stored(session, overrides, settings)
            if str(node.props.get("status", "")) == "done":
                raise UserError(f"session {session} is already done; nothing to resume")
            return await self._resume(node, cfg, client, events, out_dir)

    async def _resume(
        self,
        node: NodeRecord,
        cfg: SessionConfig,
        client: ClientLike | None,
        events: EventSink | None,
        out_dir: str | Path | None,
    ) -> RunResult:
        session = node.id
        text, title = str(node.props["passage"]), str(node.props.get("title", session))
        asked = str(node.props["question"]) if node.props.get("question") else None
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session)

        mode = SessionMode.RESUME
        opened = self.open_session(
            cfg, session_id=session, passage=text, question=asked, mode=mode, client=client, events=events
        )
        async with opened as s:
            result = await run_and_report(s.state, title=title, model=s.model, out_dir=folder)
            return self._result(result, s, folder)

    async def revisit(
        self,
        session: str,
        *,
        passage: str | None = None,
        settings: SessionConfig | None = None,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Unpack[Overrides],
    ) -> RevisitResult:
        """Judge a finished session's open stubs against new context (`passage`, else
        its own final answer), explore the relevant ones and integrate again."""
        background, _ = self._opened()
        async with held(background, session):
            finished(await background.aread(lambda s: require_session(s, session)))
            node, cfg = await self._stored(session, overrides, settings)
            new_text = check_text(passage, cfg.max_passage_bytes) if passage is not None else None
            final = await background.aread(lambda s: s.get_node(f"{session}/final"))
            context = new_text or (str(final.props.get("text", "")) if final else "")
            if not context:
                raise UserError(f"session {session} has no final answer to revisit against", "pass a passage")
            folder = Path(out_dir) if out_dir is not None else self.reports_dir(session)
            asked = str(node.props["question"]) if node.props.get("question") else None

            text = new_text or str(node.props["passage"])
            mode = SessionMode.REVISIT
            opened = self.open_session(
                cfg, session_id=session, passage=text, question=asked, mode=mode, client=client, events=events
            )
            async with opened as s:
                r = await revisit_and_report(s.state, context=context, out_dir=folder)
                spend = spend_of(s.state.handles.llm)
                return RevisitResult(session, r.checked, list(r.superseded), list(r.explored), r.final, spend)

    async def ledger(
        self,
        session: str,
        *,
        settings: SessionConfig | None = None,
        events: EventSink | None = None,
        client: ClientLike | None = None,
        **overrides: Unpack[Overrides],
    ) -> LedgerReport:
        """Trace a finished session's claims (the emergence ledger) with its own settings
        and `overrides` (a `ledger` mode, a raised budget): what is already traced is
        kept, the rest asked of the judge role. A session that ran with the ledger off is
        traced as `ledger="final"`. `settings`: the whole settings instead of the stored
        ones."""
        async with held(self._opened()[0], session):
            node, cfg = await self._stored(session, overrides, settings)
            if await self.store.aread(lambda s: s.get_node(f"{session}/final")) is None:
                raise UserError(
                    f"session {session} has no final answer to trace",
                    f"`dagmca resume {session}` finishes it",
                )
            if cfg.ledger_mode() == "off":  # asked for by this call, whatever the run said
                cfg = cfg.model_copy(update={"ledger": "final"})

            text = str(node.props["passage"])
            opened = self.open_session(
                cfg, session_id=session, passage=text, mode=SessionMode.REVISIT, client=client, events=events
            )
            async with opened as s:
                traced = await ledger_session(s.state)
                return await self._claims(session, traced.untraced, spend_of(s.state.handles.llm).calls)

    def _result(self, result: SessionResult, opened: OpenSession, out_dir: Path) -> RunResult:
        spend = spend_of(opened.state.handles.llm)
        problems = list(result.session.problems)
        return RunResult(result.session, result.final, spend, self.location, out_dir, problems)

    async def _stored(
        self, session: str, overrides: Mapping[str, object], settings: SessionConfig | None = None
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

    @contextlib.asynccontextmanager
    async def open_session(
        self,
        settings: SessionConfig,
        *,
        session_id: str,
        passage: str,
        question: str | None = None,
        mode: SessionMode = SessionMode.NEW,
        client: ClientLike | None = None,
        backend: Backend | Handed | None = None,
        shared: SharedResources | None = None,
        events: EventSink | None = None,
        fix_when_down: str | None = None,
    ) -> AsyncIterator[OpenSession]:
        """One session of this workspace, ready to run: what `run`, `resume`, `revisit`,
        `ledger`, a build and an eval each do inside it. The caller holds the session's
        lease (`run` and the others do). `backend`: one the caller already has (else the
        workspace's for `settings`, or `client` wrapped); `shared`: the concurrency limit
        and spend of the group it runs in (a build's, an eval's; else its own). An
        endpoint that goes down is an `EndpointError` whose fix is `fix_when_down`
        (default: resume the session); every finished turn is kept either way."""
        background, embedder = self._opened()
        backend = backend or await self._backends.get(settings, client)
        group = shared or SharedResources.alone(background, settings)
        try:
            async with session_state(
                settings,
                client=backend.client,
                session_id=session_id,
                passage=passage,
                embedder=embedder,
                shared=group,
                mode=mode,
                events=events,
                question=question,
            ) as state:
                # a live view (the CLI's progress) also reads the meter between events
                live = callable(getattr(events, "start", None)) and callable(getattr(events, "stop", None))
                display = cast(Display, events) if live else None
                if display is not None:
                    display.start(state.handles.llm.meter)
                try:
                    yield OpenSession(state, backend.model)
                finally:
                    if display is not None:
                        display.stop()
        except EndpointDown as exc:
            fix = f"every finished turn is kept; `dagmca resume {session_id} --store {self.location}` goes on"
            raise EndpointError(str(exc), fix_when_down or fix) from None
