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

from dagmca.store.embedded.engine import Result, run
from dagmca.store.embedded.limits import Deadline, QueryTimeout
from dagmca.store.embedded.querying import StoreRows, load, query, query_rows
from dagmca.store.embedded.rows import store_rows
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported
from dagmca.store.embedded.values import Graph

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
