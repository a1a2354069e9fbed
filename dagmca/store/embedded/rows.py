"""The store's nodes and relationships as rows for the engine's graph, every session's
with the personas, the evaluations and the swarms: the corpus `store_records` reads, in
its order.

On the SQLite store the rows are read with one query per table and their properties
decoded with `json.loads`, without building and validating a pydantic record per row:
this is a read-only path over rows the store validated when it wrote them, and every
`dagmca query` pays for it before it answers."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dagmca.graph import NodeKind
from dagmca.graph.store_nodes import SHARED_SESSIONS
from dagmca.store.base import GraphStore
from dagmca.store.embedded.values import EdgeRow, NodeRow
from dagmca.store.networkx_view import store_records
from dagmca.store.sqlite import SQLiteStore

_SESSIONS = "SELECT id FROM nodes WHERE kind = ? ORDER BY seq"
_NODES = "SELECT id, session, kind, labels, created_at, props FROM nodes ORDER BY seq"
_EDGES = "SELECT source, target, type, session, props FROM edges ORDER BY seq"


def store_rows(store: GraphStore) -> tuple[list[NodeRow], list[EdgeRow]]:
    """Nodes, then relationships: a session's after the sessions before it, each
    session's in creation order, the store's own (SHARED_SESSIONS: the personas, the
    evaluations, the swarms, the studies' findings) last."""
    if isinstance(store, SQLiteStore) and store.path.is_file():
        # a file this process may not open a second time (read-only, say) is read as
        # records, through the store's own connection
        with contextlib.suppress(sqlite3.OperationalError), _reading(store.path) as conn:
            return _sqlite_rows(conn)
    nodes, edges = store_records(store)
    return (
        [(n.id, n.session, n.kind.value, n.labels, n.created_at, dict(n.props)) for n in nodes],
        [(e.source, e.target, e.type.value, e.session, dict(e.props)) for e in edges],
    )


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    # a connection of its own, read-only: the store's may belong to its writer thread
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    try:
        yield conn
    finally:
        conn.close()


def _sqlite_rows(conn: sqlite3.Connection) -> tuple[list[NodeRow], list[EdgeRow]]:
    order = [r[0] for r in conn.execute(_SESSIONS, (NodeKind.SESSION.value,))]
    rank = {s: i for i, s in enumerate(dict.fromkeys([*order, *SHARED_SESSIONS]))}
    node_rows = [r for r in conn.execute(_NODES) if r[1] in rank]
    edge_rows = [r for r in conn.execute(_EDGES) if r[3] in rank]
    # one decode of every properties text at once: a call per row costs more than the text
    props = _decoded([r[5] for r in node_rows] + [r[4] for r in edge_rows])
    labels = _decoded([r[3] for r in node_rows])
    nodes: list[NodeRow] = [(r[0], r[1], r[2], labels[i], r[4], props[i]) for i, r in enumerate(node_rows)]
    edges: list[EdgeRow] = [
        (r[0], r[1], r[2], r[3], props[i]) for i, r in enumerate(edge_rows, len(node_rows))
    ]
    # stable: within a session, creation order stays
    nodes.sort(key=lambda n: rank[n[1]])
    edges.sort(key=lambda e: rank[e[3]])
    return nodes, edges


def _decoded(texts: list[str]) -> list[Any]:
    """JSON texts (the store's own, each one value) decoded at once."""
    return list(json.loads("[" + ",".join(texts) + "]")) if texts else []
