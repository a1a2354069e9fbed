"""A read-only query on a whole store, in process: the store's rows read into the
engine's graph (with the cyclic garbage collector paused while it is built and read),
the query run over it under a time limit."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

from dagmca.store.base import GraphStore
from dagmca.store.embedded.engine import Result, run
from dagmca.store.embedded.limits import Deadline
from dagmca.store.embedded.rows import store_rows
from dagmca.store.embedded.values import EdgeRow, Graph, NodeRow

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
