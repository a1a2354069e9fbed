"""Cypher's value types, as Neo4j 5's type predicates name them (`x IS :: INTEGER`,
`x IS NOT :: STRING`, `x :: LIST<INTEGER NOT NULL>`, `x IS TYPED ANY<STRING | FLOAT>`):
the type names and their synonyms read from a query, and whether a value is of a type.
Every type holds null unless it is written `NOT NULL` (or is NOTHING)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dagmca.store.embedded.temporal import Date, DateTime, Duration, LocalDateTime, LocalTime, Time
from dagmca.store.embedded.values import Node, Path, Rel

if TYPE_CHECKING:
    from dagmca.store.embedded.reader import Reader


@dataclass(frozen=True)
class CypherType:
    """`name` is the type's own name (INTEGER, LIST, ANY, UNION, …); `inner` a list's
    element type; `members` a union's types."""

    name: str
    nullable: bool = True
    inner: CypherType | None = None
    members: tuple[CypherType, ...] = ()


# a type's synonyms, each a sequence of words, and the type they name
_NAMES: list[tuple[tuple[str, ...], str]] = [
    (("NOTHING",), "NOTHING"),
    (("NULL",), "NULL"),
    (("BOOLEAN",), "BOOLEAN"),
    (("BOOL",), "BOOLEAN"),
    (("STRING",), "STRING"),
    (("VARCHAR",), "STRING"),
    (("SIGNED", "INTEGER"), "INTEGER"),
    (("INTEGER",), "INTEGER"),
    (("INT",), "INTEGER"),
    (("FLOAT",), "FLOAT"),
    (("DATE",), "DATE"),
    (("LOCAL", "TIME"), "LOCAL TIME"),
    (("TIME", "WITHOUT", "TIME", "ZONE"), "LOCAL TIME"),
    (("ZONED", "TIME"), "ZONED TIME"),
    (("TIME", "WITH", "TIME", "ZONE"), "ZONED TIME"),
    (("LOCAL", "DATETIME"), "LOCAL DATETIME"),
    (("TIMESTAMP", "WITHOUT", "TIME", "ZONE"), "LOCAL DATETIME"),
    (("ZONED", "DATETIME"), "ZONED DATETIME"),
    (("TIMESTAMP", "WITH", "TIME", "ZONE"), "ZONED DATETIME"),
    (("DURATION",), "DURATION"),
    (("POINT",), "POINT"),
    (("ANY", "NODE"), "NODE"),
    (("NODE",), "NODE"),
    (("ANY", "VERTEX"), "NODE"),
    (("VERTEX",), "NODE"),
    (("ANY", "RELATIONSHIP"), "RELATIONSHIP"),
    (("RELATIONSHIP",), "RELATIONSHIP"),
    (("ANY", "EDGE"), "RELATIONSHIP"),
    (("EDGE",), "RELATIONSHIP"),
    (("ANY", "MAP"), "MAP"),
    (("MAP",), "MAP"),
    (("PATH",), "PATH"),
    (("ANY", "PROPERTY", "VALUE"), "PROPERTY VALUE"),
    (("PROPERTY", "VALUE"), "PROPERTY VALUE"),
    (("ANY", "VALUE"), "ANY"),
]
_SCALARS: dict[str, type | tuple[type, ...]] = {
    "STRING": str,
    "FLOAT": float,
    "DATE": Date,
    "LOCAL TIME": LocalTime,
    "ZONED TIME": Time,
    "LOCAL DATETIME": LocalDateTime,
    "ZONED DATETIME": DateTime,
    "DURATION": Duration,
    "NODE": Node,
    "RELATIONSHIP": Rel,
    "MAP": dict,
    "PATH": Path,
}
_PROPERTY_TYPES = (bool, str, int, float, Date, LocalTime, Time, LocalDateTime, DateTime, Duration)


def read_type(r: Reader) -> CypherType:
    """A type after `::` or `IS TYPED`: a union of types (`INTEGER | STRING`)."""
    members = [_one(r)]
    while r.is_op("|"):
        r.next()
        members.append(_one(r))
    return members[0] if len(members) == 1 else CypherType("UNION", members=tuple(members))


def _one(r: Reader) -> CypherType:
    if r.is_word("ANY", "LIST", "ARRAY") and r.is_op("<", tok=r.peek()):
        word = r.next().text.upper()
        r.next()
        inner = read_type(r)
        r.expect_op(">")
        found = CypherType("LIST", inner=inner) if word != "ANY" else inner
    else:
        found = _named(r)
    return _not_null(r, found)


def _named(r: Reader) -> CypherType:
    for words, name in _NAMES:
        if all(r.is_word(w, tok=r.peek(i)) for i, w in enumerate(words)):
            for _ in words:
                r.next()
            return CypherType(name)
    if r.is_word("ANY"):
        r.next()
        return CypherType("ANY")
    r.fail("expected a type (INTEGER, STRING, LIST<…>, …)")
    raise AssertionError  # fail raises


def _not_null(r: Reader, t: CypherType) -> CypherType:
    if r.is_word("NOT") and r.is_word("NULL", tok=r.peek()):
        r.next()
        r.next()
        return CypherType(t.name, False, t.inner, t.members)
    if r.is_op("!"):
        r.next()
        return CypherType(t.name, False, t.inner, t.members)
    return t


def is_of(v: Any, t: CypherType) -> bool:
    """Whether the value `v` is of the type `t`."""
    if v is None:
        if t.name == "UNION":
            return any(is_of(None, m) for m in t.members)
        return t.nullable and t.name != "NOTHING"
    name = t.name
    if name == "UNION":
        return any(is_of(v, m) for m in t.members)
    if name == "ANY":
        return True
    if name in ("NOTHING", "NULL", "POINT"):
        return False
    if name == "BOOLEAN":
        return isinstance(v, bool)
    if name == "INTEGER":
        return isinstance(v, int) and not isinstance(v, bool)
    if name == "LIST":
        assert t.inner is not None
        return isinstance(v, list) and all(is_of(x, t.inner) for x in v)
    if name == "PROPERTY VALUE":
        if isinstance(v, list):
            return (
                all(x is not None and isinstance(x, _PROPERTY_TYPES) for x in v)
                and len({type(x) for x in v}) <= 1
            )
        return isinstance(v, _PROPERTY_TYPES)
    return isinstance(v, _SCALARS[name])
