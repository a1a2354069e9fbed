"""`Workspace.ask` answers on the workspace's backends: asking again (or after a run on
the same settings) starts no second backend, and none is stopped before the workspace
closes. On the local model that is one llama.cpp server for every ask."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dagmca.api import Workspace
from dagmca.ask.models import Answer
from dagmca.config import SessionConfig
from dagmca.llm import factory
from dagmca.llm.factory import Backend
from dagmca.llm.local import LocalModelServer
from dagmca.similarity import HashingEmbedder
from tests.support.sessions import PASSAGE

SMALL = {"llm": "fake", "max_depth": 0, "rounds": 1}
QUESTIONS = (
    "Is a congestion charge unfair to low-wage workers?",
    "Is a flat charge unfair to low-wage workers?",
)
ASKED = ("answered", "unsupported")  # the model was asked (not "nothing" retrieved)


class Counting:
    """`open_backend` as it is, counting the backends it starts and stops."""

    def __init__(self) -> None:
        self.started = 0
        self.stopped = 0

    def __call__(self, cfg: SessionConfig) -> Backend:
        backend = factory.open_backend(cfg)
        self.started += 1
        counter = self

        class Counted(Backend):
            def stop(self) -> None:
                counter.stopped += 1
                super().stop()

        return Counted(backend.client, backend.model, backend.server, backend.gguf)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Counting:
    spy = Counting()
    # every place a backend is opened from: the workspace's and a one-off ask's
    monkeypatch.setattr("dagmca.workspace.backends.open_backend", spy)
    monkeypatch.setattr("dagmca.ask.client.open_backend", spy)
    return spy


def test_a_run_and_two_asks_share_one_backend_stopped_at_close(tmp_path: Path, counting: Counting) -> None:
    async def main() -> tuple[list[Answer], int, int]:
        async with Workspace(tmp_path / "a.db", embedder=HashingEmbedder()) as ws:
            await ws.run(passage=PASSAGE, settings=SMALL)
            answers = [await ws.ask(q, settings=SMALL) for q in QUESTIONS]
            return answers, counting.started, counting.stopped

    answers, started, stopped_inside = asyncio.run(main())
    assert all(a.status in ASKED and a.model for a in answers), [a.status for a in answers]
    assert started == 1  # the run's backend answers both questions
    assert stopped_inside == 0 and counting.stopped == 1  # stopped when the workspace closed


def test_ask_scopes_latest_and_all(tmp_path: Path) -> None:
    async def main() -> tuple[Answer, Answer, Answer]:
        async with Workspace(tmp_path / "s.db", embedder=HashingEmbedder()) as ws:
            await ws.run(passage=PASSAGE, settings=SMALL, session="one")
            await ws.run(passage=PASSAGE.replace("London", "Oslo"), settings=SMALL, session="two")
            latest = await ws.ask(QUESTIONS[1], sessions="latest", retrieve_only=True)
            default = await ws.ask(QUESTIONS[1], retrieve_only=True)
            every = await ws.ask(QUESTIONS[1], sessions="all", retrieve_only=True)
            return latest, default, every

    latest, default, every = asyncio.run(main())
    assert latest.sessions == default.sessions == ["two"] and "most recent" in default.scope
    assert sorted(every.sessions) == ["one", "two"]


@pytest.mark.local_model
def test_two_asks_on_the_local_model_start_one_model_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts: list[LocalModelServer] = []
    start = LocalModelServer.start

    def counted(self: LocalModelServer) -> LocalModelServer:
        starts.append(self)
        return start(self)

    monkeypatch.setattr(LocalModelServer, "start", counted)
    local: dict[str, Any] = {"llm": "local", "max_depth": 0, "rounds": 1}

    async def main() -> list[Answer]:
        async with Workspace(tmp_path / "l.db", embedder=HashingEmbedder()) as ws:
            await ws.run(passage=PASSAGE, settings=SMALL)  # a graph to ask, on the fake model
            assert starts == []
            return [await ws.ask(q, settings=local) for q in QUESTIONS]

    answers = asyncio.run(main())
    assert all(a.status in (*ASKED, "failed") for a in answers), [a.status for a in answers]
    assert len(starts) == 1
