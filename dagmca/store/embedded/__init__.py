"""Cypher on the embedded store: read-only queries answered in process over the store's
graph, with no server, so `dagmca query` and the cookbook run on the default SQLite
store as they do on Neo4j.

No embeddable engine ran the cookbook unchanged with Neo4j's rows, started fast enough
for one command and read the store without a second copy of it (docs/guides/querying.md
has the comparison), so this is a small engine of dagmca's own: the Cypher of reading
(MATCH, OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, aggregates and percentiles,
ORDER BY, SKIP, LIMIT, UNION, label expressions, map projections, reduce, list and
pattern comprehensions, EXISTS, COUNT, COLLECT and CALL subqueries, CASE, temporal
values), each query under a time limit, and a one-line refusal naming anything else.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

from dagmca.store.base import GraphStore
from dagmca.store.embedded.engine import Result, run
from dagmca.store.embedded.limits import Deadline, QueryTimeout
from dagmca.store.embedded.rows import store_rows
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported
from dagmca.store.embedded.values import EdgeRow, Graph, NodeRow

__all__ = [
    "CypherSyntaxError",
    "Deadline",
    "Graph",
    "QueryTimeout",
    "Result",
    "StoreRows",
    "Unsupported",
    "load",
    "query",
    "query_rows",
    "run",
    "store_rows",
]

StoreRows = tuple[list[NodeRow], list[EdgeRow]]


def load(store: GraphStore) -> Graph:
    """Every session of the store, the personas and the relationships between them."""
    with _collection_paused():
        return Graph.from_rows(*store_rows(store))


def query(
    store: GraphStore,
    text: str,
    params: dict[str, Any],
    *,
    timeout: float | None = None,
    max_rows: int | None = None,
) -> Result:
    """Run a read-only query on the whole store: its column names and JSON-ready rows.
    Past `timeout` seconds it stops with `QueryTimeout`; with `max_rows`, at most one
    row more than that is returned (so the caller can say rows were left out)."""
    deadline = Deadline(timeout)
    return query_rows(store_rows(store), text, params, deadline=deadline, max_rows=max_rows)


def query_rows(
    rows: StoreRows,
    text: str,
    params: dict[str, Any],
    *,
    deadline: Deadline,
    max_rows: int | None = None,
) -> Result:
    """`query` over rows `store_rows` read: the part that needs no store, so it can run
    on a thread of its own while the store's thread serves others."""
    with _collection_paused():
        graph = Graph.from_rows(*rows)
        try:
            return run(graph, text, params, deadline=deadline, max_rows=max_rows)
        finally:
            graph.release()


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the graph is built and read: building
    tens of thousands of objects at once sets it off again and again, each time
    scanning all of them, and none of them is garbage until the query is answered."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
