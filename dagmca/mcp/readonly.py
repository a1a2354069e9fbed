"""Cypher for an assistant: read-only, on either store. A query that writes is refused
before it reaches a store, by the same check `dagmca query` makes, and a procedure
call is allowed only when the procedure is known to read; on a Bolt server the query
then runs in a read transaction besides, so the server refuses a write this check
could not see."""

from __future__ import annotations

import re
from typing import Any

from dagmca.errors import UserError
from dagmca.store.base import GraphStore
from dagmca.store.query import write_clause
from dagmca.store.target import is_bolt_uri

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


def read_query(store: GraphStore, cypher: str, params: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """Run a read-only query on `store`: its column names and JSON-ready rows. Blocking:
    run it on the store's thread."""
    refuse_writes(cypher)
    if not is_bolt_uri(store.location):
        from dagmca.store.embedded import query as embedded_query

        return embedded_query(store, cypher, params)
    # imported here: the driver is imported only when a Bolt store is in use
    import neo4j.exceptions

    from dagmca.store.neo4j import Neo4jStore
    from dagmca.store.query import records_to_rows

    assert isinstance(store, Neo4jStore)
    try:
        return records_to_rows(store.run_query(cypher, params, write=False))
    except neo4j.exceptions.Neo4jError as exc:
        raise UserError(f"the server rejected the query: {exc.message or exc.code}") from None
