"""What a workspace reads back of its sessions, without running anything."""

from __future__ import annotations

from typing import Any

from dagmca.graph import CallRecord, NodeKind, SessionNode, node_from_record
from dagmca.similarity import Embedder
from dagmca.store import require_session
from dagmca.store.background import BackgroundStore
from dagmca.store.networkx_view import load_graph
from dagmca.workspace.results import LedgerReport


class Reading:
    """The reading half of `BaseWorkspace`: sessions, a session, its graph, its calls and
    its traced claims."""

    def _opened(self) -> tuple[BackgroundStore, Embedder]:
        raise NotImplementedError

    @property
    def store(self) -> BackgroundStore:
        """The open store behind its writer thread: `await ws.store.aread(fn)` reads
        without blocking the loop, `ws.store.write(...)` queues a write. What an
        evaluation or a build keeps beside its sessions goes through it."""
        return self._opened()[0]

    async def claims(self, session: str) -> LedgerReport:
        """A session's traced claims as they are stored, without tracing anything."""
        await self.store.aread(lambda s: require_session(s, session))
        return await self._claims(session)

    async def _claims(self, session: str, untraced: int = 0, calls: int = 0) -> LedgerReport:
        records = await self.store.aread(lambda s: s.nodes(session))
        edges = await self.store.aread(lambda s: s.edges(session))
        return LedgerReport.of(session, records, edges, untraced=untraced, calls=calls)

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

    async def calls(self, session: str) -> list[CallRecord]:
        """The session's call log: one record per LLM call, replies from the cache too."""
        await self.store.aread(lambda s: require_session(s, session))
        return await self.store.aread(lambda s: s.calls(session))
