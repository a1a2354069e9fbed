"""The GraphStore contract: every backend must pass these."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import neo4j.time
import pytest

from dagmca.models import PERSONA_SESSION, CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.base import GraphStore, SessionLinked, StoreError
from dagmca.store.graph import load_graph
from dagmca.store.neo4j import Neo4jStore, connect
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer, real_neo4j_hosts, real_neo4j_target, wiped

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


def test_edges_are_counted_by_type_per_session(backend: GraphStore) -> None:
    backend.write(
        [node("a"), node("b"), node("c"), node("x", session="t")],
        [
            EdgeRecord(source="b", target="a", type=EdgeType.BRANCHES_FROM, session="s"),
            EdgeRecord(source="c", target="a", type=EdgeType.BRANCHES_FROM, session="s"),
            EdgeRecord(source="c", target="b", type=EdgeType.MERGES_INTO, session="s"),
            EdgeRecord(source="x", target="a", type=EdgeType.REFERENCES, session="t"),
        ],
    )
    assert backend.edge_counts("s") == {EdgeType.BRANCHES_FROM: 2, EdgeType.MERGES_INTO: 1}
    assert backend.edge_counts("t") == {EdgeType.REFERENCES: 1} and backend.edge_counts("none") == {}


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


def test_the_cache_is_read_many_keys_at_once(backend: GraphStore) -> None:
    """Kept vectors are read a batch at a time: more keys than one SQL statement binds."""
    for i in range(0, 1200, 2):
        backend.cache_put(f"key-{i}", "m", f"value {i}")
    found = backend.cache_get_many([f"key-{i}" for i in range(1200)] + ["key-0"])
    assert found == {f"key-{i}": f"value {i}" for i in range(0, 1200, 2)}
    assert backend.cache_get_many([]) == {}


def test_keyed_relationships_between_one_pair_stay_apart(backend: GraphStore) -> None:
    backend.write([node("t", NodeKind.TENSION), node("turn", NodeKind.TURN)])
    flags = [
        EdgeRecord(
            source="t", target="turn", type=EdgeType.FLAGGED_AT, session="s", props={"key": o, "observer": o}
        )
        for o in ("skeptical", "pragmatic")
    ]
    backend.write([], flags)
    backend.write([], flags[:1])  # the same flag again: an update, not a third edge
    got = backend.edges("s", EdgeType.FLAGGED_AT)
    assert sorted(e.props["observer"] for e in got) == ["pragmatic", "skeptical"]
    assert sorted(e.key for e in got) == ["pragmatic", "skeptical"]


def test_a_second_writer_of_the_same_ids_updates_them(backend: GraphStore, tmp_path: Path) -> None:
    """A resumed run or a second push: another store object, which did not create the
    nodes, writes them again: updates, never duplicates or a refused write."""
    first = EdgeRecord(source="a", target="b", type=EdgeType.NEXT, session="s")
    backend.write([node("a", title="one"), node("b")], [first])
    other = reopen(backend, tmp_path)
    try:
        other.write(
            [node("a", title="two"), node("b"), node("c")],
            [
                EdgeRecord(source="a", target="b", type=EdgeType.NEXT, session="s", props={"n": 2}),
                EdgeRecord(source="b", target="c", type=EdgeType.NEXT, session="s"),
            ],
        )
        other.write([node("c", title="three")])
    finally:
        if isinstance(other, SQLiteStore):  # the Neo4j one shares the backend's driver
            other.close()
    assert [n.id for n in backend.nodes("s")] == ["a", "b", "c"]
    assert backend.get_node("a").props == {"title": "two"}  # type: ignore[union-attr]
    got = [(e.source, e.target, e.props) for e in backend.edges("s")]
    assert got == [("a", "b", {"n": 2}), ("b", "c", {})]


def reopen(store: GraphStore, tmp_path: Path) -> GraphStore:
    """Another store object on the same data."""
    if isinstance(store, SQLiteStore):
        return SQLiteStore(store.path)
    assert isinstance(store, Neo4jStore)
    return Neo4jStore(store._driver, database=store._database, location=store.location)


def test_timestamps_read_back_as_they_were_written(backend: GraphStore) -> None:
    stamp = "2026-03-04T05:06:07.089+00:00"
    rec = NodeRecord(
        id="x", kind=NodeKind.SESSION, session="x", created_at=stamp,
        props={"started_at": stamp, "finished_at": "not a time", "title": stamp},
    )  # fmt: skip
    backend.write([rec], [])
    assert backend.get_node("x") == rec
    if isinstance(backend, Neo4jStore):  # a temporal value in Neo4j, so Cypher can compare times
        rows = backend.run_query(
            "MATCH (n:Session {id: 'x'}) RETURN n.started_at AS t, n.title AS title, "
            "n.started_at < datetime('2026-03-05T00:00:00Z') AS earlier",
            {},
        )
        assert isinstance(rows[0]["t"], neo4j.time.DateTime) and isinstance(rows[0]["title"], str)
        assert rows[0]["earlier"] is True


def test_the_cache_and_the_call_log_are_pruned_by_age(backend: GraphStore) -> None:
    backend.cache_put("old", "m", "1")
    backend.record_calls(
        [CallRecord(session="s", at="2020-01-01T00:00:00.000+00:00"), CallRecord(session="s")]
    )
    assert backend.prune_llm("2000-01-01T00:00:00.000+00:00", calls=True) == (0, 0)
    assert backend.prune_llm("2099-01-01T00:00:00.000+00:00") == (1, 0)  # the cache only
    assert backend.cache_get("old") is None and len(backend.calls("s")) == 2
    assert backend.prune_llm("2021-01-01T00:00:00.000+00:00", calls=True) == (0, 1)
    assert len(backend.calls("s")) == 1


def test_the_graph_holds_no_call_log_or_cache(backend: GraphStore) -> None:
    backend.cache_put("k", "m", "v")
    backend.record_calls([CallRecord(session="s")])
    if isinstance(backend, Neo4jStore):
        labels = backend.run_query("MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label", {})
        assert {r["label"] for r in labels} == set()
    else:
        assert backend.nodes("s") == [] and backend.sessions() == []


def test_a_version_1_sqlite_store_is_migrated_by_init(tmp_path: Path) -> None:
    """Version 1 kept one edge per (source, target, type); `db init` (and every run)
    gives the edges table its key and keeps every node and edge."""
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE nodes (id TEXT PRIMARY KEY, session TEXT NOT NULL, kind TEXT NOT NULL,
            labels TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL, props TEXT NOT NULL DEFAULT '{}',
            seq INTEGER NOT NULL);
        CREATE TABLE edges (source TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            target TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE, type TEXT NOT NULL,
            session TEXT NOT NULL, props TEXT NOT NULL DEFAULT '{}', seq INTEGER NOT NULL,
            PRIMARY KEY (source, target, type));
        CREATE TABLE llm_calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL,
            record TEXT NOT NULL);
        CREATE TABLE llm_cache (key TEXT PRIMARY KEY, model TEXT NOT NULL, value TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT '2026');
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        INSERT INTO nodes VALUES ('t', 's', 'Tension', '[]', '2026', '{}', 1),
            ('u', 's', 'Turn', '[]', '2026', '{}', 2);
        INSERT INTO edges VALUES ('t', 'u', 'FLAGGED_AT', 's', '{"observer": "skeptical"}', 1);
        """
    )
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    assert not store.is_initialised()  # read commands ask for `db init` first
    store.init_schema()
    assert store.is_initialised()
    store.write(
        [], [EdgeRecord(source="t", target="u", type=EdgeType.FLAGGED_AT, session="s", props={"key": "x"})]
    )
    assert [e.props for e in store.edges("s")] == [{"observer": "skeptical"}, {"key": "x"}]
    store.close()


def test_a_claim_is_one_workers_until_it_expires_or_is_released(backend: GraphStore) -> None:
    assert backend.claim("passage-a", "w1", 60) == "w1"
    assert backend.claim("passage-a", "w2", 60) == "w1", "another worker's live claim"
    assert backend.claim("passage-a", "w1", 60) == "w1", "its own worker renews it"
    assert backend.claim("passage-b", "w2", 60) == "w2", "claims are per key"
    backend.release("passage-a", "w2")  # not w2's: nothing happens
    assert backend.claim("passage-a", "w2", 60) == "w1"
    backend.release("passage-a", "w1")
    assert backend.claim("passage-a", "w2", 0.3) == "w2"
    time.sleep(0.5)  # w2 stopped renewing: its claim expired
    assert backend.claim("passage-a", "w3", 60) == "w3"
    assert backend.claim("passage-a", "w4", 60) == "w3"
    assert backend.claim("passage-a", "w4", 60, replacing="w3") == "w4", "a dead worker's claim is taken over"
    assert all(n.kind is not NodeKind.SESSION for n in backend.sessions()), "claims are not graph nodes"


def test_concurrent_claims_give_each_key_to_one_worker(backend: GraphStore, tmp_path: Path) -> None:
    """Threads with a store each (as workers have) race for the same keys."""
    location = backend.location
    results: dict[str, list[str]] = {f"k{i}": [] for i in range(8)}
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        store = SQLiteStore(location) if isinstance(backend, SQLiteStore) else None
        own = store or backend  # the Bolt driver is safe across threads
        try:
            for key in results:
                if own.claim(key, name, 60) == name:
                    results[key].append(name)
        except BaseException as exc:
            errors.append(exc)
        if store is not None:
            store.close()

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(len(winners) == 1 for winners in results.values()), results


def _two_sessions(backend: GraphStore) -> None:
    """s1 and s2, each a Session and a debate; s1's seat plays a persona."""
    backend.write(
        [
            node("s1", NodeKind.SESSION, session="s1"),
            node("s1/d", session="s1"),
            node("s1/seat", NodeKind.AGENT, session="s1"),
            node("s2", NodeKind.SESSION, session="s2"),
            node("s2/d", session="s2"),
            node("p", NodeKind.PERSONA, session=PERSONA_SESSION),
        ],
        [
            EdgeRecord(source="s1/d", target="s1", type=EdgeType.IN_SESSION, session="s1"),
            EdgeRecord(source="s1/seat", target="p", type=EdgeType.PLAYS, session="s1"),
            EdgeRecord(source="s2/d", target="s2", type=EdgeType.IN_SESSION, session="s2"),
        ],
    )
    backend.record_calls([CallRecord(session="s1"), CallRecord(session="s1"), CallRecord(session="s2")])
    backend.cache_put("k", "m", "kept")


def test_deleting_a_session_removes_its_nodes_relationships_and_calls(backend: GraphStore) -> None:
    _two_sessions(backend)
    assert backend.delete_session("s1") == (3, 2, 2)
    assert backend.get_node("s1") is None and backend.nodes("s1") == [] and backend.edges("s1") == []
    assert backend.calls("s1") == [] and len(backend.calls("s2")) == 1
    assert [s.id for s in backend.sessions()] == ["s2"] and len(backend.edges("s2")) == 1
    assert backend.get_node("p") is not None, "personas outlive the sessions they played in"
    assert backend.cache_get("k") == "kept", "the response cache is shared"
    assert backend.delete_session("s1") == (0, 0, 0)
    with pytest.raises(StoreError):
        backend.delete_session(PERSONA_SESSION)


def test_a_session_other_sessions_link_to_is_deleted_only_when_forced(backend: GraphStore) -> None:
    _two_sessions(backend)
    # s2 (a later passage) answers s1's debate: s2's relationship into s1
    backend.write([], [EdgeRecord(source="s2", target="s1/d", type=EdgeType.SUPERSEDES, session="s2")])
    with pytest.raises(SessionLinked) as refused:
        backend.delete_session("s1")
    assert refused.value.linked == ["s2"]
    assert len(backend.nodes("s1")) == 3 and len(backend.calls("s1")) == 2, "a refusal removes nothing"
    assert backend.delete_session("s2") == (2, 2, 1), "s2's own links go with it"
    backend.write(  # s2 again, with its link into s1
        [node("s2", NodeKind.SESSION, session="s2"), node("s2/d", session="s2")],
        [
            EdgeRecord(source="s2/d", target="s2", type=EdgeType.IN_SESSION, session="s2"),
            EdgeRecord(source="s2", target="s1/d", type=EdgeType.SUPERSEDES, session="s2"),
        ],
    )
    assert backend.delete_session("s1", force=True) == (3, 3, 2)
    assert backend.edges("s2") == [backend.edges("s2", EdgeType.IN_SESSION)[0]]
