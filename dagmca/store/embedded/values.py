"""The graph the engine reads (built from a store's rows or records) and Cypher's rules for
its values: equality and comparison with null, the order ORDER BY sorts in, and the
JSON-ready form rows are printed in (the same as `dagmca query` prints from Neo4j)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dagmca.graph import EdgeRecord, NodeRecord
from dagmca.store.embedded import temporal
from dagmca.store.embedded.temporal import DateTime, Duration, LocalDateTime, Temporal
from dagmca.store.rows import TIME_KEYS, to_temporal
from dagmca.store.statements import NODE_LABEL

# A node and a relationship as the graph is built from them, without pydantic's
# validation (the store's own rows, read only): id, session, kind, extra labels,
# created_at, properties; and source, target, type, session, properties. The property
# dicts become the graph's own.
NodeRow = tuple[str, str, str, Sequence[str], str, dict[str, Any]]
EdgeRow = tuple[str, str, str, str, dict[str, Any]]


@dataclass(eq=False, slots=True)
class Node:
    """Compared by identity: one object per stored node."""

    key: int
    labels: tuple[str, ...]
    props: dict[str, Any]
    out: list[Rel] = field(default_factory=list)
    inc: list[Rel] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Rel:
    key: int
    type: str
    start: Node
    end: Node
    props: dict[str, Any]


@dataclass(frozen=True)
class Path:
    nodes: tuple[Node, ...]
    rels: tuple[Rel, ...]


class Graph:
    """Nodes carry `Node` and their kind as labels (Stub too, where set), `id`,
    `session`, `created_at` and `seq` beside their properties, and timestamps as
    zoned datetimes: the same graph `dagmca push` writes into Neo4j."""

    def __init__(self, nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord]) -> None:
        self._fill(
            ((n.id, n.session, n.kind.value, n.labels, n.created_at, dict(n.props)) for n in nodes),
            ((e.source, e.target, e.type.value, e.session, dict(e.props)) for e in edges),
        )

    @classmethod
    def from_rows(cls, nodes: Iterable[NodeRow], edges: Iterable[EdgeRow]) -> Graph:
        """The graph of rows in the order they were created (it numbers them `seq`)."""
        graph = cls.__new__(cls)
        graph._fill(nodes, edges)
        return graph

    def _fill(self, nodes: Iterable[NodeRow], edges: Iterable[EdgeRow]) -> None:
        self.nodes: list[Node] = []
        self.by_id: dict[str, Node] = {}
        self.by_label: dict[str, list[Node]] = {}
        self.rels: list[Rel] = []
        self._indexes: dict[tuple[str, str], dict[Any, list[Node]]] = {}
        # one pass over each list: every store's graph is built here, per query
        all_nodes, by_id, by_label = self.nodes, self.by_id, self.by_label
        for seq, (id_, session, kind, labels, created_at, props) in enumerate(nodes, 1):
            _temporals(props)
            props.update(id=id_, session=session, created_at=_temporal("created_at", created_at), seq=seq)
            node = Node(seq - 1, (NODE_LABEL, kind, *sorted(labels)), props)
            all_nodes.append(node)
            by_id[id_] = node
            for label in node.labels:
                by_label.setdefault(label, []).append(node)
        rels = self.rels
        for seq, (source, target, type_, session, props) in enumerate(edges, 1):
            start, end = by_id.get(source), by_id.get(target)
            if start is None or end is None:  # an end outside what was loaded
                continue
            _temporals(props)
            props.update(session=session, seq=seq)
            rel = Rel(len(rels), type_, start, end, props)
            rels.append(rel)
            start.out.append(rel)
            end.inc.append(rel)

    @classmethod
    def of(cls, nodes: list[Node], rels: list[Rel]) -> Graph:
        """A graph of nodes and relationships built already, with no dagmca schema (the
        openCypher TCK's graphs: any labels, any properties)."""
        graph = cls.__new__(cls)
        graph._fill([], [])
        graph.nodes, graph.rels = nodes, rels
        for node in nodes:
            if isinstance(node.props.get("id"), str):
                graph.by_id[node.props["id"]] = node
            for label in node.labels:
                graph.by_label.setdefault(label, []).append(node)
        return graph

    def release(self) -> None:
        """Drop the links from nodes to their relationships: without those cycles the
        graph is freed as soon as it is dropped, not at the collector's next full pass."""
        for node in self.nodes:
            node.out.clear()
            node.inc.clear()

    def lookup(self, label: str | None, key: str, value: Any) -> list[Node]:
        """Nodes (of `label`) whose property `key` equals `value`, through an index built
        the first time it is asked for."""
        if key == "id" and isinstance(value, str):
            node = self.by_id.get(value)
            return [node] if node is not None and (label is None or label in node.labels) else []
        index = self._indexes.get((label or "", key))
        if index is None:
            index = {}
            for node in self.by_label.get(label, []) if label else self.nodes:
                v = node.props.get(key)
                if v is not None:
                    index.setdefault(hashable(v), []).append(node)
            self._indexes[(label or "", key)] = index
        return index.get(hashable(value), [])


def _temporals(props: dict[str, Any]) -> None:
    """Timestamps among the properties as datetimes, in place."""
    for key in TIME_KEYS:
        if key in props:
            props[key] = _temporal(key, props[key])


def _temporal(key: str, value: Any) -> Any:
    """A stored timestamp as Neo4j holds it (a zoned datetime); other text stays text."""
    found = to_temporal(key, value)
    return temporal.from_python(found) if isinstance(found, datetime) else found


def hashable(v: Any) -> Any:
    """A key for grouping and DISTINCT: equal Cypher values give equal keys."""
    if isinstance(v, list | tuple):
        return ("list", tuple(hashable(x) for x in v))
    if isinstance(v, dict):
        return ("map", tuple(sorted((k, hashable(x)) for k, x in v.items())))
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def equals(a: Any, b: Any) -> bool | None:
    """Cypher's `=`: null when either side is null."""
    if a is None or b is None:
        return None
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return False
        results = [equals(x, y) for x, y in zip(a, b, strict=True)]
        return False if False in results else None if None in results else True
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return bool(a == b)


def compare(a: Any, b: Any) -> int | None:
    """-1, 0 or 1 for `<` and the like; None for null or values of kinds that do not
    compare (a number and a string)."""
    if a is None or b is None:
        return None
    if isinstance(a, bool) and isinstance(b, bool):
        return (a > b) - (a < b)
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    if numbers and not isinstance(a, bool) and not isinstance(b, bool):
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return None
        return int(a > b) - int(a < b)
    if isinstance(a, str) and isinstance(b, str):
        return int(a > b) - int(a < b)
    if isinstance(a, Temporal | Duration):
        return temporal.compare(a, b)
    if isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c != 0:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    return None


# ORDER BY's order across kinds (ascending): maps, nodes, relationships, lists, paths,
# temporals (each type apart), strings, booleans, numbers, and null last.
def _rank(v: Any) -> int:
    if v is None:
        return 9
    if isinstance(v, bool):
        return 7
    if isinstance(v, int | float):
        return 8
    if isinstance(v, str):
        return 6
    if isinstance(v, Temporal | Duration):
        return 5
    if isinstance(v, Path):
        return 4
    if isinstance(v, list):
        return 3
    if isinstance(v, Rel):
        return 2
    if isinstance(v, Node):
        return 1
    return 0


class SortKey:
    """ORDER BY's key for one value."""

    __slots__ = ("rank", "value")

    def __init__(self, value: Any) -> None:
        self.rank = _rank(value)
        self.value = value

    def __lt__(self, other: SortKey) -> bool:
        if self.rank != other.rank:
            return self.rank < other.rank
        v, w = self.value, other.value
        if self.rank == 8 and (isinstance(v, float) and math.isnan(v)):
            return False
        if self.rank == 3:
            for x, y in zip(v, w, strict=False):
                kx, ky = SortKey(x), SortKey(y)
                if kx < ky:
                    return True
                if ky < kx:
                    return False
            return len(v) < len(w)
        if self.rank in (1, 2):
            return bool(v.key < w.key)
        if self.rank in (0, 4, 9):
            return False
        if self.rank == 5:
            x, y = temporal.SORT_RANK[type(v)], temporal.SORT_RANK[type(w)]
            return x < y if x != y else temporal.order_key(v) < temporal.order_key(w)
        return bool(v < w)


def iso(when: datetime) -> str:
    """A timestamp as dagmca writes them: UTC, milliseconds."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="milliseconds")


def output(v: Any) -> Any:
    """A value as JSON-ready data: nodes carry their labels, relationships their type and
    ends, paths their node ids, datetimes as ISO text in UTC, other temporal values as
    Neo4j writes them (as `dagmca query` on Neo4j)."""
    if isinstance(v, Node):
        return {"labels": sorted(v.labels), **{k: output(x) for k, x in v.props.items()}}
    if isinstance(v, Rel):
        ends = {"from": v.start.props.get("id"), "to": v.end.props.get("id")}
        return {"type": v.type, **ends, **{k: output(x) for k, x in v.props.items()}}
    if isinstance(v, Path):
        return [n.props.get("id") for n in v.nodes]
    if isinstance(v, list | tuple):
        return [output(x) for x in v]
    if isinstance(v, dict):
        return {k: output(x) for k, x in v.items()}
    if isinstance(v, DateTime | LocalDateTime):
        # as `dagmca query` prints the driver's datetimes: UTC (a local one read as UTC)
        return iso(temporal.to_python(v))
    if isinstance(v, Temporal | Duration):
        return temporal.text(v)
    return v
