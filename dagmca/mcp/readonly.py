"""Cypher for an assistant: read-only, on either store. A query that writes is refused
before it reaches a store, by the same check `dagmca query` makes, and a procedure
call is allowed only when the procedure is known to read; on a Bolt server the query
then runs in a read transaction besides, so the server refuses a write this check
could not see. Each query has a time limit and a cap on the rows it returns, and runs
on a thread of its own: a runaway query cannot stall the server."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from dagmca.errors import UserError
from dagmca.store.background import BackgroundStore
from dagmca.store.query import write_clause
from dagmca.store.target import is_bolt_uri

# An assistant's query, unless the server is started with other limits: it may take this
# many seconds, and this many rows come back (the answer says when more were left out).
QUERY_TIMEOUT = 10.0
QUERY_ROWS = 1000

# Procedures that only read: full-text search, and what the schema holds.
READ_PROCEDURES = frozenset(
    {
        "db.index.fulltext.querynodes",
        "db.index.fulltext.queryrelationships",
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "dbms.components",
    }
)
_CALL = re.compile(r"\bCALL\s+([A-Za-z_][\w.]*)", re.IGNORECASE)
# String literals, quoted names and comments, which may hold any word.
_NOT_CODE = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)


class WriteRefused(UserError):
    """A query that would write, refused before any store saw it."""


def refuse_writes(cypher: str) -> None:
    """Raise `WriteRefused` for a query that writes or calls a procedure not known to
    only read (a `CALL { … }` subquery is checked by its own clauses)."""
    clause = write_clause(cypher)
    if clause:
        raise WriteRefused(f"the query writes ({clause}); this server only reads the graph")
    code = _NOT_CODE.sub(" ", cypher)
    for found in _CALL.finditer(code):
        name = found.group(1)
        if name.lower() not in READ_PROCEDURES:
            raise WriteRefused(
                f"the query calls {name}, a procedure not known to only read; this server only "
                "reads the graph (it calls full-text search and the schema's procedures)"
            )


@dataclass(frozen=True)
class QueryLimits:
    """What one `query` may take: `seconds` of time (None: no limit) and `rows` returned
    (None: all; beyond it the answer says rows were left out)."""

    seconds: float | None = QUERY_TIMEOUT
    rows: int | None = QUERY_ROWS


async def read_query(
    store: BackgroundStore, cypher: str, params: dict[str, Any], limits: QueryLimits
) -> tuple[list[str], list[Any]]:
    """Run a read-only query on `store`: its column names and JSON-ready rows, at most
    one row more than `limits.rows`. The query runs on a thread of its own, not the
    store's, so the other tools go on answering while it runs; past `limits.seconds`
    it stops with `QueryTimeout` (on a Bolt server, the transaction's timeout)."""
    refuse_writes(cypher)
    fix = "narrow its MATCH (a label, a session, a LIMIT); the server's limit is `dagmca mcp --query-timeout`"
    if not is_bolt_uri(store.location):
        from dagmca.store.embedded import Deadline, query_rows, store_rows

        deadline = Deadline(limits.seconds, fix)
        # the rows are read on the store's thread, after any write queued before them
        rows = await store.aread(store_rows)
        return await asyncio.to_thread(
            query_rows, rows, cypher, params, deadline=deadline, max_rows=limits.rows
        )
    from dagmca.store.neo4j import Neo4jStore
    from dagmca.store.query import bolt_rows

    bolt = store.store
    assert isinstance(bolt, Neo4jStore)
    keys, found = await asyncio.to_thread(bolt_rows, bolt, cypher, params, timeout=limits.seconds)
    return keys, found if limits.rows is None else found[: limits.rows + 1]
