from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.debate.session import SessionResult, run_session
from dagmca.debate.state import SessionState
from dagmca.llm.fake import Responder, ScriptedCall, ScriptedLLM
from dagmca.llm.metered import Budget, MeteredLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from tests.bolt_server import BoltServer

PASSAGE = (
    "Cities should price road space. Congestion is a cost each driver imposes on others. "
    "Critics say a flat charge is unfair to low-wage workers and that traffic moves to poorer "
    "neighbourhoods. Supporters cite London and Stockholm."
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "test.db")
    s.init_schema()
    yield s
    s.close()


RunSession = Callable[..., tuple[SessionResult, SessionState, ScriptedLLM]]


@pytest.fixture
def run_fake(store: SQLiteStore, tmp_path: Path) -> RunSession:
    """Run a whole session on the scripted fake and the hashing embedder."""

    def run(
        responder: Responder | None = None,
        *,
        session: str = "s1",
        delay: float | Callable[[ScriptedCall], float] = 0.0,
        budget: Budget | None = None,
        cache: bool = False,
        events: Any = None,
        **settings: Any,
    ) -> tuple[SessionResult, SessionState, ScriptedLLM]:
        settings.setdefault("llm", "fake")
        cfg = SessionConfig(**settings)
        fake = ScriptedLLM(responder, delay=delay)

        async def go() -> tuple[SessionResult, SessionState]:
            llm = MeteredLLM(
                fake,
                concurrency=cfg.concurrency,
                budget=budget,
                cache=store if cache else None,
                record=lambda call: store.record_calls([call]),
                session=session,
            )
            state = SessionState(
                config=cfg,
                session_id=session,
                store=store,
                llm=llm,
                embedder=HashingEmbedder(),
                passage=PASSAGE,
            )
            if events is not None:
                state.events = events
            result = await run_session(
                state, title="test", model="scripted", out_dir=tmp_path / "out" / session
            )
            return result, state

        result, state = asyncio.run(go())
        return result, state, fake

    return run


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """One ArcadeDB Bolt server for the whole test run (the JVM starts once per process)."""
    server = BoltServer.start(tmp_path_factory.mktemp("arcadedb"))
    yield server
    server.stop()
