"""Cypher on the embedded store: read-only queries answered in process over the store's
graph, with no server, so `dagmca query` and the cookbook run on the default SQLite
store as they do on Neo4j.

No embeddable engine ran the cookbook unchanged with Neo4j's rows and started fast
enough for one command (docs/guides/querying.md has the comparison), so this is a
small engine of dagmca's own: the Cypher of reading (MATCH, OPTIONAL MATCH, WHERE,
WITH, UNWIND, RETURN, aggregates, ORDER BY, SKIP, LIMIT, UNION, EXISTS, list
comprehensions, CASE, temporal values), and a one-line refusal naming anything else.
"""

from __future__ import annotations

from typing import Any

from dagmca.store.base import GraphStore
from dagmca.store.embedded.engine import Result, run
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported
from dagmca.store.embedded.values import Graph
from dagmca.store.graph import store_records

__all__ = ["CypherSyntaxError", "Graph", "Result", "Unsupported", "load", "query", "run"]


def load(store: GraphStore) -> Graph:
    """Every session of the store, the personas and the relationships between them."""
    return Graph(*store_records(store))


def query(store: GraphStore, text: str, params: dict[str, Any]) -> Result:
    """Run a read-only query on the whole store: its column names and JSON-ready rows."""
    return run(load(store), text, params)
