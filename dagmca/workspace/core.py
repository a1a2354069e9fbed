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
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar, Unpack

from dagmca.config import SessionConfig
from dagmca.config.overrides import Overrides
from dagmca.debate.events import EventSink
from dagmca.errors import UserError
from dagmca.graph import NodeKind
from dagmca.llm.factory import Backend
from dagmca.passage import check_text, title_of
from dagmca.similarity import Embedder
from dagmca.similarity.choose import make_embedder
from dagmca.store import open_store, resolve_store
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.workspace.backends import Backends, ClientLike, Handed
from dagmca.workspace.inputs import MAX_QUESTION_BYTES, SettingsLike, given_store, settings_from
from dagmca.workspace.reopening import Reopening
from dagmca.workspace.results import RunResult
from dagmca.workspace.session import run_and_report
from dagmca.workspace.stored import continues, new_session_id

if TYPE_CHECKING:
    import neo4j

W = TypeVar("W", bound="BaseWorkspace")


class BaseWorkspace(Reopening):
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
        found = await background.aread(lambda s: s.get_node(session_id))
        if found is not None and session is not None and found.kind is NodeKind.SESSION:
            continues(found, cfg, (text, asked), self.location)  # else says what differs
            return await self._resume(found, cfg, client, events, out_dir)
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session_id)
        name = title or title_of(asked or text, session_id)

        # NEW refuses an id taken meanwhile: checked under the session's lease
        opened = self.open_session(
            cfg, session_id=session_id, passage=text, question=asked, client=client, events=events
        )
        async with opened as s:
            result = await run_and_report(s.state, title=name, model=s.model, out_dir=folder)
            return self._result(result, s, folder)
