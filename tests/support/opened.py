"""A session opened the way every dagmca session is (`Workspace.open_session`), around
a store and a client a test hands in: for tests that drive a session's steps or read
its state afterwards."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from dagmca.config import SessionConfig
from dagmca.corpus.build import Build
from dagmca.corpus.sources import Passage
from dagmca.debate.events import EventSink
from dagmca.debate.state import SessionState
from dagmca.llm.base import LLMClient
from dagmca.similarity import Embedder, HashingEmbedder
from dagmca.store.base import GraphStore
from dagmca.workspace import BaseWorkspace
from dagmca.workspace.session import SessionMode


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
    mode: SessionMode = SessionMode.NEW,
    question: str | None = None,
) -> AsyncIterator[SessionState]:
    """The session's state in a workspace on `store` (left open: the test's) with
    `embedder`, on `client`; every write has reached `store` when it ends."""
    async with BaseWorkspace(store, embedder=embedder) as ws:
        opened = ws.open_session(
            cfg,
            session_id=session_id,
            passage=passage,
            question=question,
            mode=mode,
            client=client,
            events=events,
        )
        async with opened as session:
            yield session.state


def run_build(job: Build, todo: list[Passage], store: GraphStore, client: LLMClient) -> None:
    """A corpus build's `todo` in a workspace on `store`, on `client` and the hashing
    embedder, as `dagmca build` runs it."""

    async def go() -> None:
        async with BaseWorkspace(store, embedder=HashingEmbedder()) as ws:
            await job.run(todo, ws, client)

    asyncio.run(go())
