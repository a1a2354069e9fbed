from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink
from dagmca.debate.session import SessionResult
from dagmca.debate.state import SessionState
from dagmca.llm.fake import Responder, ScriptedCall, ScriptedLLM, checked_excerpt
from dagmca.prompts.schemas import TensionFlag, joint_lenses, joint_turns
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.bolt_server import BoltServer
from tests.support.lanes import place
from tests.support.opened import open_state

PASSAGE = (
    "Cities should price road space. Congestion is a cost each driver imposes on others. "
    "Critics say a flat charge is unfair to low-wage workers and that traffic moves to poorer "
    "neighbourhoods. Supporters cite London and Stockholm."
)

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


RunSession = Callable[..., tuple[SessionResult, SessionState, ScriptedLLM]]


def excerpt_of(call: ScriptedCall) -> str:
    """What an observer's flag quotes from the turn it checks: the start of the turn to
    check (on a group of sibling turns asked lens by lens, of the turn `lens_by_lens`
    names); a flag whose excerpt is not in its turn is discarded."""
    named = re.search(r"\(turn (\d+)\)\Z", call.prompt)
    return checked_excerpt(call.prompt, int(named.group(1)) if named else 1)


def lens_by_lens(responder: Responder) -> Responder:
    """A responder written for one observer call per lens, answering the joint call
    (every lens at once) too: asked once per lens, in the lenses' order, as that
    lens's own call would be; on a group of sibling turns, once per lens per turn, the
    turn's number added to the prompt (as its own call would have differed)."""

    def respond(call: ScriptedCall) -> Any:
        if call.schema is None or "flags" not in call.schema.model_fields:
            return responder(call)
        lenses, turns = joint_lenses(call.schema), joint_turns(call.schema)
        flags = []
        for turn in range(1, turns + 1) if turns else [0]:
            messages = call.messages
            if turn:
                last = {**messages[-1], "content": f"{messages[-1]['content']}\n(turn {turn})"}
                messages = [*messages[:-1], last]
            for lens in lenses:
                meta = call.meta.model_copy(update={"agent": f"observer:{lens}"})
                reply = responder(ScriptedCall(messages, TensionFlag, meta, call.max_tokens))
                if isinstance(reply, BaseModel):
                    reply = reply.model_dump(mode="json")
                if isinstance(reply, dict):
                    own = {k: v for k, v in reply.items() if k != "turn"}
                    flags.append({"lens": lens, **({"turn": turn} if turn else {}), **own})
        return {"flags": flags}

    return respond


def run_scripted(
    store: SQLiteStore,
    out_dir: Path,
    responder: Responder | None = None,
    *,
    session: str = "s1",
    delay: float | Callable[[ScriptedCall], float] = 0.0,
    events: EventSink | None = None,
    passage: str = PASSAGE,
    caps: bool = False,
    **settings: Any,
) -> tuple[SessionResult, SessionState, ScriptedLLM]:
    """A whole session on the scripted fake and the hashing embedder, wired as the CLI
    wires it (runner.open_state, runner.run_and_report)."""
    settings.setdefault("llm", "fake")
    # each run asks, and its agents start from zero: runs sharing a store stay independent
    settings.setdefault("cache", False)
    settings.setdefault("agent_memory", "session")
    cfg = SessionConfig(**settings)
    if responder is not None and not getattr(responder, "answers_joint", False):
        responder = lens_by_lens(responder)
    fake = ScriptedLLM(responder, delay=delay, caps=caps)

    async def go() -> tuple[SessionResult, SessionState]:
        async with open_state(
            cfg,
            store,
            client=fake,
            session_id=session,
            passage=passage,
            embedder=HashingEmbedder(),
            events=events,
        ) as state:
            result = await run_and_report(state, title="test", model="scripted", out_dir=out_dir / session)
        return result, state

    result, state = asyncio.run(go())
    return result, state, fake


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
