"""`dagmca ask`: retrieval over the stored graph (an incremental embedding index, full-text
search, expansion), an answer whose citations are checked, and the dissent beside it;
on real sessions made by the scripted fake."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dagmca.ask import Answer, ask, retrieve
from dagmca.ask.models import Hit
from dagmca.ask.retrieval import fuse, search_terms
from dagmca.cli.app import main
from dagmca.graph import CallPhase, EdgeRecord, EdgeType, ModelRole, NodeKind, SynthesisNode, role_of
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.base import GraphStore
from dagmca.store.neo4j import connect
from dagmca.store.push import push_session
from dagmca.store.sqlite import SQLiteStore
from tests.support.ask_sessions import (
    ABSORB_Q,
    CODE_TURN,
    FAIR_A,
    PRICES_Q,
    STUB_Q,
    SYNTHESIS,
    run_fairness,
    run_prices,
)
from tests.support.bolt_server import BoltServer, real_neo4j_hosts, real_neo4j_target, wiped


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Store files never asked anything: `one` holds s1, `two` s1 and s2. Tests ask copies."""
    root = tmp_path_factory.mktemp("ask")
    one, two = root / "one.db", root / "two.db"
    first = SQLiteStore(one)
    with first:
        first.init_schema()
        run_fairness(first, root / "out")
    shutil.copy(one, two)  # closed: the file is whole
    second = SQLiteStore(two)
    with second:
        run_prices(second, root / "out")
    return {"one": one, "two": two}


@pytest.fixture
def copy_of(pristine: dict[str, Path], tmp_path: Path) -> Any:
    return lambda name: Path(shutil.copy(pristine[name], tmp_path / f"{name}.db"))


@pytest.fixture
def two(copy_of: Any) -> Iterator[SQLiteStore]:
    store = SQLiteStore(copy_of("two"))
    yield store
    store.close()


class CountingEmbedder(HashingEmbedder):
    """Counts the texts it encodes (a fresh one per ask, as a new process would be)."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded: list[str] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += texts
        return super()._encode(texts)


class BlindEmbedder(HashingEmbedder):
    """Like a real model before a code it never saw: no vector for a word with a digit."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "blind-512"

    def _encode(self, texts: list[str]) -> np.ndarray:
        return super()._encode([re.sub(r"\S*\d\S*", " ", t) for t in texts])


_NODE = re.compile(r"^Node (\S+) — ", re.M)


def context_ids(call: ScriptedCall) -> list[str]:
    return _NODE.findall(call.messages[-1]["content"])


def citing(*extra: str) -> Any:
    """An answer citing the first node of its context, and `extra` ids."""

    def respond(call: ScriptedCall) -> Any:
        assert call.meta.phase == CallPhase.ASK
        ids = context_ids(call)
        statement = {"text": "Exemptions make the charge fair.", "cites": [ids[0], *extra]}
        return {"supported": "yes", "statements": [statement], "unsettled": "Whether revenue lasts."}

    return respond


def asked(store: GraphStore, question: str, llm: ScriptedLLM, **kwargs: Any) -> Answer:
    kwargs.setdefault("embedder", HashingEmbedder())
    return asyncio.run(ask(store, question, llm=llm, **kwargs))


def test_an_answer_keeps_only_citations_of_nodes_in_its_context(two: SQLiteStore) -> None:
    # s1/main/r1 exists (a round: never retrieved); s1/nowhere does not
    fake = ScriptedLLM(citing("s1/main/r1", "s1/nowhere", "[s1/nowhere]"))
    answer = asked(two, "Is the flat charge fair to low wage workers?", fake, sessions=["s1"])
    [call] = fake.calls
    assert role_of(call.meta.phase) is ModelRole.FINAL
    context = context_ids(call)
    assert answer.status == "answered" and answer.supported == "yes"
    assert [c.id for c in answer.citations] == [context[0]]
    removed = {(r.id, r.reason) for r in answer.removed_citations}
    assert removed == {("s1/main/r1", "not in the context"), ("s1/nowhere", "no such node")}
    assert answer.citations_removed == 2
    assert answer.answer == f"Exemptions make the charge fair. [{context[0]}]"
    assert answer.statements[0].cites == [context[0]]
    # every citation exists, was retrieved and was in the prompt
    in_context = {h.id for h in answer.retrieved if h.in_context}
    assert set(context) == in_context
    assert all(c.id in in_context and two.get_node(c.id) is not None for c in answer.citations)
    # the texts went whole: the branch's resolution is in the prompt as stored
    assert any(h.text == FAIR_A for h in answer.retrieved) and FAIR_A in call.prompt


def test_a_question_the_graph_does_not_answer_says_so(two: SQLiteStore) -> None:
    fake = ScriptedLLM(lambda call: {"supported": "no", "statements": [], "unsettled": ""})
    answer = asked(two, "Is the flat charge fair to low wage workers?", fake, sessions=["s1"])
    assert answer.status == "unsupported" and answer.citations == [] and "no answer" in answer.note
    # nothing in the graph shares a word with the question: no model is asked
    silent = ScriptedLLM(lambda call: pytest.fail("no call when nothing is retrieved"))
    nothing = asked(two, "Xylophones?", silent, sessions="all")
    assert nothing.status == "nothing" and not silent.calls and nothing.retrieved == []
    assert nothing.answer.startswith("the graph holds nothing on this")


def test_the_dissent_lists_an_unreconciled_contradiction_and_an_open_stub(two: SQLiteStore) -> None:
    fake = ScriptedLLM(citing())
    answer = asked(two, "Does the toll raise prices at shops in the centre?", fake, sessions=["s2"])
    [contradiction] = answer.dissent.contradictions
    assert {contradiction.source, contradiction.target} == {"s2/main/b1", "s2/main/b2"}
    assert {contradiction.source_question, contradiction.target_question} == {PRICES_Q, ABSORB_Q}
    assert "contradict" in contradiction.reason
    assert STUB_Q in [q.question for q in answer.dissent.open_questions]
    stub = two.get_node(next(q.id for q in answer.dissent.open_questions if q.question == STUB_Q))
    assert stub is not None and stub.props["status"] == "stub"
    assert {contradiction.source, contradiction.target} <= {h.id for h in answer.retrieved}


def test_a_contradiction_a_synthesis_reconciled_is_not_dissent(two: SQLiteStore) -> None:
    [(source, target)] = [(e.source, e.target) for e in two.edges("s1") if e.type.value == "CONTRADICTS"]
    # the group holding the contradiction was not merged: the contradiction is dissent
    assert two.nodes("s1", NodeKind.SYNTHESIS) == []
    question = "Will the exemptions for workers last?"
    found = asyncio.run(retrieve(two, question, embedder=HashingEmbedder(), sessions=["s1"]))
    assert [(c.source, c.target) for c in found.dissent.contradictions] == [(source, target)]
    # a session stored before that rule holds a synthesis of both sides: reconciled
    synthesis = SynthesisNode(
        id="s1/main/syn1", session="s1", resolution=SYNTHESIS, reason="converge", similarity=0.5
    )
    merges = [
        EdgeRecord(source=m, target=synthesis.id, type=EdgeType.MERGES_INTO, session="s1")
        for m in ("s1/main/b1", "s1/main/b2", "s1/main/b3")
    ]
    two.write([synthesis.to_record()], merges)
    assert {source, target} <= {e.source for e in merges}  # both sides of the contradiction merged
    found = asyncio.run(retrieve(two, question, embedder=HashingEmbedder(), sessions=["s1"]))
    assert {source, target, synthesis.id} <= {h.id for h in found.retrieved}
    assert found.dissent.contradictions == []


def test_the_index_is_incremental(copy_of: Any, tmp_path: Path) -> None:
    store = SQLiteStore(copy_of("one"))
    question = "Is the flat charge fair to low wage workers?"

    def index(sessions: Any) -> tuple[Any, list[str]]:
        embedder = CountingEmbedder()
        found = asyncio.run(retrieve(store, question, embedder=embedder, sessions=sessions))
        return found.index, embedder.encoded

    try:
        first, encoded = index(["s1"])
        assert first.embedded == first.indexed > 20 and FAIR_A in encoded and question in encoded
        again, encoded = index(["s1"])
        assert again.embedded == 0 and encoded == [question]  # only the question
        # a new session: only its nodes are embedded
        run_prices(store, tmp_path / "out")
        both, encoded = index("all")
        assert both.embedded == both.indexed - first.indexed > 0
        assert CODE_TURN in encoded and FAIR_A not in encoded
        # an edited text is embedded again, and nothing else
        node = store.get_node("s1/main/b1")
        assert node is not None
        props = {**node.props, "resolution": "Exemptions were dropped."}
        store.write([node.model_copy(update={"props": props})])
        edited, encoded = index("all")
        assert edited.embedded == 1 and "Exemptions were dropped." in encoded
        # the vectors are float32 bytes in the store's own file
        conn = sqlite3.connect(store.path)
        dims = {len(v) for (v,) in conn.execute("SELECT vector FROM ask_vectors")}
        conn.close()
        assert dims == {HashingEmbedder().dims * 4}
    finally:
        store.close()


def test_full_text_finds_a_code_the_embedding_misses(two: SQLiteStore) -> None:
    assert search_terms('What is "Ordinance QX-4471"? And QX-4471?') == ["ordinance qx-4471", "qx-4471"]
    found = asyncio.run(retrieve(two, "What is QX-4471?", embedder=BlindEmbedder(), sessions="all"))
    [turn] = [h for h in found.hits if h.text == CODE_TURN]
    # found by full text alone (as high as the best vector hit: fusion ties them), not by vector
    assert turn.sources == ["fulltext"] and turn.similarity is None and turn.rank <= 2
    assert all(h.text != CODE_TURN for h in found.hits if "vector" in h.sources)


def test_fusion_ranks_by_reciprocal_rank() -> None:
    fused = fuse([["a", "b", "c"], ["c", "a"]], k=60)
    assert [n for n, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


@pytest.fixture
def hashing_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI with the hashing embedder instead of the configured one (same code path,
    instant)."""
    monkeypatch.setattr("dagmca.similarity.choose.make_embedder", lambda name=None: HashingEmbedder())


def ask_calls(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT record FROM llm_calls WHERE session LIKE 'ask-%' ORDER BY seq").fetchall()
    conn.close()
    return [json.loads(r[0]) for r in rows]


@pytest.mark.usefixtures("hashing_cli")
def test_cli_json_validates_and_a_repeated_ask_is_free(
    copy_of: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_of("two")
    argv = ["ask", "Does the toll raise prices at shops?", "--store", str(path), "--llm", "fake", "--json"]
    assert main(argv) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert {"answer", "citations", "dissent", "retrieved"} <= set(data)
    assert {"contradictions", "open_questions"} <= set(data["dissent"])
    answer = Answer.model_validate_json(out.out)
    # without --session: the most recent session, and the scope says so
    assert answer.sessions == ["s2"] and "most recent" in answer.scope
    retrieved = {h.id for h in answer.retrieved}
    assert all(c.id in retrieved for c in answer.citations)
    assert answer.dissent.contradictions  # s2's branches contradict each other
    assert main(argv) == 0
    assert Answer.model_validate_json(capsys.readouterr().out).answer == answer.answer
    first, second = ask_calls(path)
    assert first["role"] == "final" and first["phase"] == "ask" and not first["cache_hit"]
    assert second["cache_hit"] and second["key"] == first["key"]


@pytest.mark.usefixtures("hashing_cli")
@pytest.mark.slow
def test_cli_retrieve_only_makes_no_call(
    copy_of: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dagmca.ask.client.open_backend", lambda cfg: pytest.fail("no backend"))
    path = copy_of("two")
    argv = ["ask", "Does the toll raise prices at shops?", "--store", str(path), "--all", "--retrieve-only"]
    assert main([*argv, "--json"]) == 0
    answer = Answer.model_validate_json(capsys.readouterr().out)
    assert answer.status == "retrieved" and answer.answer == "" and answer.model == ""
    assert answer.sessions == ["s1", "s2"] and [h.rank for h in answer.retrieved if h.rank][:3] == [1, 2, 3]
    assert main(argv) == 0  # the table
    shown = capsys.readouterr()
    assert "Retrieved" in shown.out and "Still disputed" in shown.out
    assert ask_calls(path) == []


@pytest.mark.usefixtures("hashing_cli")
def test_cli_on_an_empty_store_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.db"
    assert main(["db", "init", "--store", str(path)]) == 0
    capsys.readouterr()
    assert main(["ask", "What did the debates conclude?", "--store", str(path), "--llm", "fake"]) == 0
    shown = capsys.readouterr()
    assert shown.out.strip().splitlines() == ["the graph holds nothing on this: the store has no session yet"]
    assert shown.err == ""


REAL_NEO4J = pytest.param("neo4j", marks=pytest.mark.allow_hosts(real_neo4j_hosts()))


@pytest.fixture(params=["bolt", REAL_NEO4J])
def bolt_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "bolt":
        server: BoltServer = request.getfixturevalue("bolt_server")
        store = connect(server.new_target(), llm_store=tmp_path / "llm.db")
    else:
        target = real_neo4j_target()
        if target is None:
            pytest.skip("real Neo4j: set NEO4J_URI (and NEO4J_PASSWORD) to a scratch database to run")
        wiped(target).close()
        store = connect(target, llm_store=tmp_path / "llm.db")
    store.init_schema()
    yield store
    store.close()


@pytest.mark.slow
def test_retrieval_on_a_bolt_server(bolt_store: GraphStore, two: SQLiteStore) -> None:
    """Vectors in the SQLite file beside the graph; texts searched by the server (its
    full-text index, or where it has none, as ArcadeDB, the CONTAINS query)."""
    push_session(two, bolt_store, "s2")
    first = asyncio.run(retrieve(bolt_store, "What is QX-4471?", embedder=BlindEmbedder(), sessions=["s2"]))
    assert first.index.embedded == first.index.indexed > 0

    def code_turn() -> tuple[Hit | None, Any]:
        found = asyncio.run(
            retrieve(bolt_store, "What is QX-4471?", embedder=BlindEmbedder(), sessions=["s2"])
        )
        return next((h for h in found.hits if h.text == CODE_TURN), None), found

    deadline = time.monotonic() + 30  # Neo4j fills a new full-text index in the background
    while (found := code_turn())[0] is None:
        assert time.monotonic() < deadline, "the full-text search never found the code"
        time.sleep(0.5)
    turn, retrieval = found
    assert turn is not None and turn.sources == ["fulltext"]
    assert retrieval.index.embedded == 0  # the index in the sidecar is reused
    conflict = asyncio.run(
        retrieve(bolt_store, "Does the toll raise prices at shops in the centre?", embedder=HashingEmbedder())
    )
    [contradiction] = conflict.dissent.contradictions
    assert {contradiction.source, contradiction.target} == {"s2/main/b1", "s2/main/b2"}
    assert STUB_Q in [q.question for q in conflict.dissent.open_questions]
