"""`dagmca query`: parameters from the command line, the read-only guard, plain values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dagmca.errors import UserError
from dagmca.store.rows import from_temporal

if TYPE_CHECKING:
    import neo4j

    from dagmca.store.neo4j import Neo4jStore

_WRITE_CLAUSE = re.compile(
    r"\b(CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|FOREACH|LOAD\s+CSV|ALTER|RENAME|GRANT|DENY|REVOKE)\b",
    re.IGNORECASE,
)
# String literals, quoted names and comments, which may contain any word.
_NOT_CODE = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)


def parse_params(pairs: Iterable[str]) -> dict[str, Any]:
    """`k=v` pairs; v is read as JSON when it parses (numbers, true, lists), else as text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise UserError(f"bad --param {pair!r}", "write it as name=value, e.g. --param session=abc")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    return params


def write_clause(query: str) -> str | None:
    """The first clause that writes, outside literals and comments; None for a read."""
    found = _WRITE_CLAUSE.search(_NOT_CODE.sub(" ", query))
    return found.group(1).upper() if found else None


def plain(value: Any) -> Any:
    """A driver value as JSON-ready data: nodes carry their labels, relationships
    their type and ends, paths their node ids; a timestamp in the form the embedded
    store prints it (UTC, milliseconds), other temporal values as Neo4j writes them,
    so both stores give the same rows."""
    # imported here: the driver takes a third of a second to import, and only Neo4j's
    # rows need it (the embedded store's are plain already)
    import neo4j.graph
    import neo4j.time

    # before lists: the driver's Duration is a tuple
    if isinstance(value, neo4j.time.DateTime):
        return from_temporal(value)
    if isinstance(value, neo4j.time.Duration | neo4j.time.Time):
        return _temporal_text(value)
    if isinstance(value, neo4j.time.Date):
        return str(value)
    if isinstance(value, neo4j.graph.Node):
        return {"labels": sorted(value.labels), **{k: plain(v) for k, v in value.items()}}
    if isinstance(value, neo4j.graph.Relationship):
        ends = [n.get("id") if n is not None else None for n in (value.start_node, value.end_node)]
        return {"type": value.type, "from": ends[0], "to": ends[1], **{k: plain(v) for k, v in value.items()}}
    if isinstance(value, neo4j.graph.Path):
        return [n.get("id") for n in value.nodes]
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _temporal_text(value: neo4j.time.Duration | neo4j.time.Time) -> str:
    """A driver's duration or time as Neo4j's toString() writes it (the driver's own
    text of a time always has nine decimals)."""
    import neo4j.time

    from dagmca.store.embedded import temporal

    if isinstance(value, neo4j.time.Duration):
        return temporal.text(temporal.Duration.of(value.months, value.days, value.seconds, value.nanoseconds))
    nanos = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000_000 + value.nanosecond
    offset = value.utcoffset()
    if offset is None:
        return temporal.text(temporal.LocalTime(nanos))
    return temporal.text(temporal.Time(nanos, int(offset.total_seconds())))


def records_to_rows(records: Iterable[neo4j.Record]) -> tuple[list[str], list[dict[str, Any]]]:
    keys: list[str] = []
    rows: list[dict[str, Any]] = []
    for record in records:
        if not keys:
            keys = list(record.keys())
        rows.append(dict(zip(record.keys(), map(plain, record.values()), strict=True)))
    return keys, rows


def bolt_rows(
    store: Neo4jStore, text: str, params: dict[str, Any], *, write: bool = False, timeout: float | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """A user's Cypher on a Bolt server, its columns and rows: the server ends it after
    `timeout` seconds (its transaction's timeout), and what the server refuses is one line."""
    import neo4j.exceptions

    from dagmca.store.embedded.limits import QueryTimeout

    try:
        return records_to_rows(store.run_query(text, params, write=write, timeout=timeout))
    except neo4j.exceptions.Neo4jError as exc:
        if timeout is not None and "TransactionTimedOut" in (exc.code or ""):
            raise QueryTimeout(timeout) from None
        raise UserError(f"the server rejected the query: {exc.message or exc.code}") from None
