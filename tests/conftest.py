from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagmca.debate.session import SessionResult
from dagmca.debate.state import SessionState
from dagmca.llm.fake import Responder, ScriptedLLM
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer
from tests.support.lanes import place
from tests.support.sessions import RunSession, run_scripted

# Settings a developer's shell may carry: none of them may reach a test (OTEL_*: a
# collector's endpoint would trace every test to it). (A real Neo4j for the contract
# suite is read once, at import, by tests/support/bolt_server.py.)
ISOLATED_PREFIXES = ("DAGMCA_", "NEO4J_", "OPENAI_", "OTEL_")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test's lane (tests/support/lanes.py): `scripts/test.sh --fast` leaves the slow out."""
    for item in items:
        place(item)


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without DAGMCA_*, NEO4J_* and OPENAI_* variables, so a stray
    setting cannot change a default or send a test to a real service."""
    for key in list(os.environ):
        if key.startswith(ISOLATED_PREFIXES):
            monkeypatch.delenv(key)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "test.db")
    s.init_schema()
    yield s
    s.close()


@pytest.fixture
def run_fake(store: SQLiteStore, tmp_path: Path) -> RunSession:
    """Run a whole session on the scripted fake, into the test's SQLite store."""

    def run(
        responder: Responder | None = None, **kwargs: Any
    ) -> tuple[SessionResult, SessionState, ScriptedLLM]:
        return run_scripted(store, tmp_path / "out", responder, **kwargs)

    return run


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """One ArcadeDB Bolt server for the whole test run (the JVM starts once per process)."""
    server = BoltServer.start(tmp_path_factory.mktemp("arcadedb"))
    yield server
    server.stop()
