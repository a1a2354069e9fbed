"""Loading the embedded store's graph for a query: the rows read straight from SQLite,
without pydantic records, make the same graph as the validated records, order and
numbering included; and a query leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import NodeKind, NodeRecord
from dagmca.store.embedded import CypherSyntaxError, load, query, rows
from dagmca.store.embedded.values import Graph, output
from dagmca.store.networkx_view import store_records
from dagmca.store.sqlite import SQLiteStore
from tests.support.cypher_sessions import STORES


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    paths = {}
    for name, (make, _, _) in STORES.items():
        folder = tmp_path_factory.mktemp(name)
        with SQLiteStore(folder / "dagmca.db") as store:
            store.init_schema()
            make(store, folder / "out")
            # a node of no listed session: neither way of loading reads it
            orphan = NodeRecord(id="stray", kind=NodeKind.TURN, session="gone", created_at="2026-01-01")
            store.write([orphan])
        paths[name] = folder / "dagmca.db"
    return paths


def shape(graph: Graph) -> tuple[list[Any], list[Any]]:
    nodes = [(n.key, n.labels, output(n.props)) for n in graph.nodes]
    rels = [(r.key, r.type, r.start.key, r.end.key, output(r.props)) for r in graph.rels]
    return nodes, rels


@pytest.mark.parametrize("name", list(STORES))
def test_the_rows_make_the_graph_the_records_make(made: dict[str, Path], name: str) -> None:
    with SQLiteStore(made[name]) as store:
        from_records = shape(Graph(*store_records(store)))
        from_rows = shape(load(store))
    assert from_rows[0] and from_rows[1]
    assert "stray" not in {n[2]["id"] for n in from_rows[0]}
    assert from_rows == from_records


def test_the_graph_of_a_store_with_nothing_in_it_is_empty(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "dagmca.db") as store:
        store.init_schema()
        assert query(store, "MATCH (n) RETURN count(n) AS n", {}) == (["n"], [{"n": 0}])


def test_a_query_leaves_the_collector_as_it_found_it(made: dict[str, Path]) -> None:
    with SQLiteStore(made["rich"]) as store:
        assert gc.isenabled()
        query(store, "MATCH (n) RETURN count(n) AS n", {})
        assert gc.isenabled()
        with pytest.raises(CypherSyntaxError):
            query(store, "MATCH (n RETURN n", {})
        assert gc.isenabled()
        gc.disable()
        try:
            query(store, "MATCH (n) RETURN count(n) AS n", {})
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_a_file_that_cannot_be_opened_again_is_read_as_records(
    made: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(made["rich"]) as store:
        expected = shape(load(store))

        def refused(path: Path) -> Any:
            raise sqlite3.OperationalError("unable to open database file")

        monkeypatch.setattr(rows, "_reading", refused)
        assert shape(load(store)) == expected
