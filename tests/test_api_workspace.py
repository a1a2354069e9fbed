"""The Python API beyond one session: a corpus build and an evaluation through a
`Workspace` (and their synchronous forms), the ledger traced through it, and what a
user may hand in: an `openai.AsyncOpenAI` client, a `neo4j` driver, an embedder."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai import AsyncOpenAI

import dagmca
from dagmca.api import BuildResult, EvalOptions, Workspace
from dagmca.evaluation import Task
from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import HashingEmbedder
from dagmca.store.neo4j import Neo4jStore
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer
from tests.support.fault_server import FaultServer
from tests.support.sessions import PASSAGE

SMALL = {"llm": "fake", "max_depth": 0, "rounds": 1}
EVAL = EvalOptions(arms="single,mca", eval_id="ev")


def passages(folder: Path) -> Path:
    folder.mkdir()
    (folder / "a.txt").write_text(PASSAGE)
    (folder / "b.txt").write_text(PASSAGE.replace("London", "Singapore") + " Oslo tried it too.")
    return folder


def test_a_build_through_the_workspace_runs_each_passage_once(tmp_path: Path) -> None:
    folder = passages(tmp_path / "texts")

    async def main() -> tuple[BuildResult, BuildResult, list[str]]:
        async with Workspace(tmp_path / "b.db", embedder=HashingEmbedder()) as ws:
            first = await ws.build([folder], settings=SMALL, parallel=2)
            again = await ws.build([folder], settings=SMALL)
            return first, again, [s.id for s in await ws.sessions()]

    first, again, stored = asyncio.run(main())
    assert [p.status for p in first.passages] == ["done", "done"]
    assert all(p.ran and p.calls > 0 for p in first.passages)
    assert first.totals.calls == sum(p.calls for p in first.passages) > 0
    assert sorted(stored) == sorted(p.session for p in first.passages)
    # a rerun finds both finished and linked: no call
    assert [p.status for p in again.passages] == ["finished earlier", "finished earlier"]
    assert again.totals.calls == 0 and not again.degraded
    assert (tmp_path / "sessions" / first.passages[0].session / "final_state.json").exists()


def test_the_synchronous_build_skips_what_it_cannot_use(tmp_path: Path) -> None:
    folder = passages(tmp_path / "texts")
    (folder / "empty.txt").write_text("   ")
    result = dagmca.build([folder], store=tmp_path / "s.db", embedder=HashingEmbedder(), **SMALL)
    assert len(result.passages) == 2 and result.totals.skipped_inputs == 1
    assert result.skipped[0].source.endswith("empty.txt")


def answering(answer: str) -> ScriptedLLM:
    def respond(call: ScriptedCall) -> object:
        if call.schema is ShortAnswer:
            return {"answer": answer}
        return default_responder(call)

    return ScriptedLLM(respond)


def test_an_eval_through_the_workspace_scores_its_arms_and_a_rerun_asks_nothing(tmp_path: Path) -> None:
    tasks = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in (2, 3)]
    client = answering("4")

    async def main() -> tuple[dagmca.EvalReport, dagmca.EvalReport, int]:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            first = await ws.eval(tasks, options=EVAL, client=client, settings=SMALL)
            asked = len(client.calls)
            again = await ws.eval(tasks, options=EVAL, client=client, settings=SMALL)
            return first, again, asked

    first, again, asked = asyncio.run(main())
    # the scripted model answers 4: right on t2, wrong on t3, for both arms
    for row in first.arms:
        assert row.sessions == 2 and row.accuracy is not None and row.accuracy.value == 0.5
    assert asked > 0 and len(client.calls) == asked
    assert [r.model_dump() for r in again.arms] == [r.model_dump() for r in first.arms]
    store = SQLiteStore(tmp_path / "e.db")
    try:
        assert store.get_node("ev/evaluation") is not None
    finally:
        store.close()


def test_the_ledger_is_traced_through_the_workspace(tmp_path: Path) -> None:
    async def main() -> None:
        async with Workspace(tmp_path / "l.db", embedder=HashingEmbedder()) as ws:
            await ws.run(PASSAGE, settings={**SMALL, "ledger": "off"}, session="s")
            assert (await ws.claims("s")).claims == []
            traced = await ws.ledger("s")
            assert traced.claims and traced.calls > 0 and traced.final is not None
            stored = await ws.claims("s")
            assert [c.id for c in stored.claims] == [c.id for c in traced.claims]
            calls = await ws.calls("s")
            assert any(c.phase == "ledger" for c in calls)

    asyncio.run(main())


def test_a_handed_in_openai_client_sends_every_call_and_stays_open(tmp_path: Path) -> None:
    bodies: list[dict[str, Any]] = []
    with FaultServer(on_request=bodies.append) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)

        async def main() -> tuple[dagmca.RunResult, bool]:
            async with Workspace(tmp_path / "o.db", embedder=HashingEmbedder()) as ws:
                result = await ws.run(
                    PASSAGE, settings={**SMALL, "llm": "openai", "model": "fault-model"}, client=client
                )
            closed = client.is_closed()
            await client.close()
            return result, closed

        result, closed = asyncio.run(main())
        assert result.status == "done" and result.final is not None
        assert bodies and {b["model"] for b in bodies} == {"fault-model"}
        assert len(bodies) >= result.spend.calls > 0  # every call reached it (and the pre-flight)
        assert not closed  # the caller's: the workspace left it open


@pytest.mark.slow
def test_a_handed_in_neo4j_driver_holds_the_session(bolt_server: BoltServer, tmp_path: Path) -> None:
    import neo4j

    target = bolt_server.new_target()
    driver = neo4j.GraphDatabase.driver(target.uri, auth=(target.user, target.password or ""))
    try:

        async def main() -> list[str]:
            async with Workspace(
                driver, database=target.database, embedder=HashingEmbedder(), reports=tmp_path / "r"
            ) as ws:
                await ws.run(PASSAGE, settings=SMALL, session="bolt")
                return [s.id for s in await ws.sessions()]

        assert asyncio.run(main()) == ["bolt"]
        # written through the driver, which is still the caller's, open, to read it back
        again = Neo4jStore(driver, database=target.database)
        assert again.nodes("bolt", NodeKind.FINAL) and again.nodes("bolt", NodeKind.TURN)
        assert (tmp_path / "r" / "bolt" / "final_state.json").exists()
    finally:
        driver.close()


class CountingEmbedder(HashingEmbedder):
    """Counts what it encodes and whether it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0
        self.closed = False

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        return super()._encode(texts)

    def close(self) -> None:
        self.closed = True
        super().close()


def test_a_handed_in_embedder_serves_every_session_and_stays_open(tmp_path: Path) -> None:
    embedder = CountingEmbedder()

    async def main() -> None:
        async with Workspace(tmp_path / "m.db", embedder=embedder) as ws:
            assert ws.embedder is embedder
            await ws.run(PASSAGE, settings=SMALL, session="one")

    asyncio.run(main())
    assert embedder.encoded > 0 and not embedder.closed
    store = SQLiteStore(tmp_path / "m.db")
    try:
        assert store.nodes("one", NodeKind.FINAL)
    finally:
        store.close()
    embedder.close()
