"""The GraphStore contract (`dagmca.testing.GraphStoreContract`, the suite a store's
author runs against their own store) run against the SQLite store, a real Bolt server
and, when NEO4J_URI is set, real Neo4j; and what only one of them does."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, nullcontext
from pathlib import Path

import neo4j.time
import pytest

from dagmca.graph import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.base import GraphStore
from dagmca.store.neo4j import Neo4jStore, connect
from dagmca.store.sqlite import SQLiteStore
from dagmca.testing import GraphStoreContract
from tests.support.bolt_server import BoltServer, real_neo4j_hosts, real_neo4j_target, wiped


class TestSQLiteStore(GraphStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[GraphStore]:
        store = SQLiteStore(tmp_path / "contract.db")
        store.init_schema()
        yield store
        store.close()

    def reopen(self, store: GraphStore) -> AbstractContextManager[GraphStore]:
        assert isinstance(store, SQLiteStore)
        return closing(SQLiteStore(store.path))


class TestBoltStore(GraphStoreContract):
    @pytest.fixture
    def store(self, bolt_server: BoltServer) -> Iterator[GraphStore]:
        store = connect(bolt_server.new_target())
        store.init_schema()
        yield store
        store.close()

    def reopen(self, store: GraphStore) -> AbstractContextManager[GraphStore]:
        """Another store object on the backend's driver (safe across threads), which
        the backend closes."""
        assert isinstance(store, Neo4jStore)
        return nullcontext(Neo4jStore(store._driver, database=store._database, location=store.location))

    @pytest.mark.slow
    def test_exploring_a_stub_keeps_its_edges(self, store: GraphStore) -> None:
        super().test_exploring_a_stub_keeps_its_edges(store)

    def test_timestamps_are_temporal_values_cypher_compares(self, store: GraphStore) -> None:
        assert isinstance(store, Neo4jStore)
        stamp = "2026-03-04T05:06:07.089+00:00"
        rec = NodeRecord(
            id="x",
            kind=NodeKind.SESSION,
            session="x",
            created_at=stamp,
            props={"started_at": stamp, "title": stamp},
        )
        store.write([rec], [])
        rows = store.run_query(
            "MATCH (n:Session {id: 'x'}) RETURN n.started_at AS t, n.title AS title, "
            "n.started_at < datetime('2026-03-05T00:00:00Z') AS earlier",
            {},
        )
        assert isinstance(rows[0]["t"], neo4j.time.DateTime) and isinstance(rows[0]["title"], str)
        assert rows[0]["earlier"] is True

    def test_the_call_log_and_cache_are_no_nodes(self, store: GraphStore) -> None:
        assert isinstance(store, Neo4jStore)
        store.cache_put("k", "m", "v")
        store.record_calls([CallRecord(session="s")])
        labels = store.run_query("MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label", {})
        assert {r["label"] for r in labels} == set()


@pytest.mark.allow_hosts(real_neo4j_hosts())
class TestRealNeo4j(TestBoltStore):
    # the contract's own test, without the Bolt server's slow mark
    test_exploring_a_stub_keeps_its_edges = GraphStoreContract.test_exploring_a_stub_keeps_its_edges

    @pytest.fixture
    def store(self) -> Iterator[GraphStore]:
        target = real_neo4j_target()
        if target is None:
            pytest.skip("real Neo4j: set NEO4J_URI (and NEO4J_PASSWORD) to a scratch database to run")
        store = wiped(target)
        store.init_schema()
        yield store
        store.close()


def test_sqlite_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "w.db")
    store.init_schema()
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()


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
