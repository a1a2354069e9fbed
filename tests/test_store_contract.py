"""The GraphStore contract: every backend must pass these."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmca.models import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.base import GraphStore, StoreError
from dagmca.store.graph import load_graph
from dagmca.store.neo4j import connect
from dagmca.store.sqlite import SQLiteStore
from tests.bolt_server import BoltServer, real_neo4j_hosts, real_neo4j_target, wiped

REAL_NEO4J = pytest.param("neo4j", marks=pytest.mark.allow_hosts(real_neo4j_hosts()))


@pytest.fixture(params=["sqlite", "bolt", REAL_NEO4J])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    store: GraphStore
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path / "contract.db")
    elif request.param == "bolt":
        server: BoltServer = request.getfixturevalue("bolt_server")
        store = connect(server.new_target())
    else:
        target = real_neo4j_target()
        if target is None:
            pytest.skip("real Neo4j: set NEO4J_URI (and NEO4J_PASSWORD) to a scratch database to run")
        store = wiped(target)
    store.init_schema()
    yield store
    store.close()


def node(id_: str, kind: NodeKind = NodeKind.DEBATE, session: str = "s", **props: object) -> NodeRecord:
    return NodeRecord(id=id_, kind=kind, session=session, created_at="2026-01-01T00:00:00", props=props)  # type: ignore[arg-type]


def test_init_is_idempotent(backend: GraphStore) -> None:
    backend.init_schema()
    backend.init_schema()
    assert backend.is_initialised()


def test_upsert_replaces_properties_and_labels(backend: GraphStore) -> None:
    backend.write(
        [node("a", NodeKind.TENSION, question="q", status="stub").model_copy(update={"labels": ("Stub",)})]
    )
    backend.write([node("a", NodeKind.TENSION, question="q", status="explored")])
    got = backend.get_node("a")
    assert got is not None
    assert got.props == {"question": "q", "status": "explored"} and got.labels == ()
    assert len(backend.nodes("s")) == 1


def test_edges_are_unique_per_type_and_order_is_kept(backend: GraphStore) -> None:
    backend.write([node("a"), node("b"), node("c")])
    e = EdgeRecord(source="a", target="b", type=EdgeType.REFERENCES, session="s", props={"similarity": 0.8})
    backend.write([], [e, e])
    backend.write([], [EdgeRecord(source="a", target="b", type=EdgeType.ELABORATES, session="s")])
    assert [x.type for x in backend.edges("s")] == [EdgeType.REFERENCES, EdgeType.ELABORATES]
    assert backend.edges("s", EdgeType.REFERENCES)[0].props == {"similarity": 0.8}
    assert [n.id for n in backend.nodes("s")] == ["a", "b", "c"]


def test_a_failed_write_leaves_nothing(backend: GraphStore) -> None:
    bad = EdgeRecord(source="x", target="missing", type=EdgeType.NEXT, session="s")
    with pytest.raises(StoreError):
        backend.write([node("x")], [bad])
    assert backend.get_node("x") is None


def test_sessions_are_separate(backend: GraphStore) -> None:
    backend.write([node("s1", NodeKind.SESSION, session="s1"), node("s2", NodeKind.SESSION, session="s2")])
    backend.write([node("d1", session="s1")])
    assert [s.id for s in backend.sessions()] == ["s1", "s2"]
    assert {n.id for n in backend.nodes("s1")} == {"s1", "d1"}
    assert backend.has_session("s1") and not backend.has_session("d1")


def test_loads_into_a_multidigraph(backend: GraphStore) -> None:
    backend.write([node("a", title="t"), node("b")])
    backend.write(
        [],
        [
            EdgeRecord(source="a", target="b", type=EdgeType.REFERENCES, session="s"),
            EdgeRecord(source="a", target="b", type=EdgeType.ELABORATES, session="s"),
        ],
    )
    g = load_graph(backend, "s")
    assert g.is_multigraph() and g.is_directed()
    assert g.nodes["a"]["kind"] == "Debate" and g.nodes["a"]["title"] == "t"
    assert set(g["a"]["b"]) == {"REFERENCES", "ELABORATES"}


def test_sqlite_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "w.db")
    store.init_schema()
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()


def test_exploring_a_stub_keeps_its_edges(backend: GraphStore) -> None:
    stub = node("t", NodeKind.TENSION, status="stub").model_copy(update={"labels": ("Stub",)})
    backend.write(
        [stub, node("turn", NodeKind.TURN)],
        [EdgeRecord(source="t", target="turn", type=EdgeType.FLAGGED_AT, session="s")],
    )
    backend.write([node("t", NodeKind.TENSION, status="explored")])
    backend.write([stub])  # and back: labels follow the latest record
    assert backend.get_node("t") == stub
    assert [(e.source, e.target) for e in backend.edges("s", EdgeType.FLAGGED_AT)] == [("t", "turn")]


def test_one_write_may_repeat_a_node(backend: GraphStore) -> None:
    backend.write([node("a", title="first"), node("a", title="second")])
    got = backend.get_node("a")
    assert got is not None and got.props == {"title": "second"}


def test_structured_values_round_trip(backend: GraphStore) -> None:
    rec = node("a", n=3, f=0.25, flag=True, words=["x", "y"], empty=[], text='it\'s "quoted" \\ <b>')
    backend.write([rec])
    assert backend.get_node("a") == rec


def test_call_records_are_kept_per_session_in_order(backend: GraphStore) -> None:
    first = CallRecord(
        session="s", agent="L1N1", debate="s/main", phase="respond", prompt_tokens=10,
        completion_tokens=5, retries=2, faults=["rate_limited", "timeout"], latency_s=0.5,
    )  # fmt: skip
    second = CallRecord(session="s", agent="observer:skeptical", cache_hit=True, error="boom")
    backend.record_calls([first])
    backend.record_calls([second, CallRecord(session="other")])
    assert backend.calls("s") == [first, second]
    assert len(backend.calls("other")) == 1 and backend.calls("none") == []
    assert backend.nodes("s") == []  # accounting is not part of the graph


def test_the_response_cache_keeps_the_first_value(backend: GraphStore) -> None:
    assert backend.cache_get("k") is None
    backend.cache_put("k", "m", '{"text": "first \\u00e9"}')
    backend.cache_put("k", "m", '{"text": "second"}')
    assert backend.cache_get("k") == '{"text": "first \\u00e9"}'
