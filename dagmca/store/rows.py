"""Records as the rows the Bolt and embedded stores keep, and back: a node's or an edge's
properties beside the keys the store owns, timestamps as temporal values for Neo4j, and
the labels a node may carry beside its kind. No Cypher here: the statements that take
and give back these rows are in statements.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from dagmca.graph import STUB_LABEL, EdgeRecord, EdgeType, NodeKind, NodeRecord

# Properties the store itself owns on every node, beside the record's own props.
NODE_KEYS = ("id", "session", "created_at", "seq")
EDGE_KEYS = ("session", "seq")
# Timestamps: temporal values in Neo4j (so Cypher can compare them with datetime() and
# durations), ISO strings everywhere else.
TIME_KEYS = frozenset({"created_at", "started_at", "finished_at", "updated_at", "at"})
# The labels a node may carry beside its kind's (a whitelist: labels cannot be parameters)
EXTRA_LABELS = frozenset({STUB_LABEL})


def node_row(record: NodeRecord, seq: int) -> dict[str, Any]:
    clash = set(record.props) & set(NODE_KEYS)
    if clash:
        raise ValueError(f"node property {sorted(clash)[0]!r} is reserved by the store")
    props: dict[str, Any] = {k: to_temporal(k, v) for k, v in record.props.items()}
    props.update(
        id=record.id, session=record.session, created_at=to_temporal("created_at", record.created_at)
    )
    return {"id": record.id, "seq": seq, "props": props}


def edge_row(record: EdgeRecord, seq: int) -> dict[str, Any]:
    clash = set(record.props) & set(EDGE_KEYS)
    if clash:
        raise ValueError(f"edge property {sorted(clash)[0]!r} is reserved by the store")
    props: dict[str, Any] = {k: to_temporal(k, v) for k, v in record.props.items()}
    props["session"] = record.session
    return {"source": record.source, "target": record.target, "key": record.key, "seq": seq, "props": props}


_KINDS = frozenset(kind.value for kind in NodeKind)


def to_node(props: Mapping[str, Any], labels: Sequence[str]) -> NodeRecord:
    kinds = [NodeKind(label) for label in labels if label in _KINDS]
    if len(kinds) != 1:
        raise ValueError(f"node {props.get('id')!r} has kind labels {sorted(labels)}")
    extra = tuple(sorted(label for label in labels if label in EXTRA_LABELS))
    return NodeRecord(
        id=props["id"],
        kind=kinds[0],
        session=props["session"],
        created_at=from_temporal(props["created_at"]),
        labels=extra,
        props={k: from_temporal(v) for k, v in props.items() if k not in NODE_KEYS},
    )


def to_edge(source: str, target: str, type_: str, props: Mapping[str, Any]) -> EdgeRecord:
    return EdgeRecord(
        source=source,
        target=target,
        type=EdgeType(type_),
        session=props["session"],
        props={k: from_temporal(v) for k, v in props.items() if k not in EDGE_KEYS},
    )


def to_temporal(key: str, value: Any) -> Any:
    """A timestamp property as a datetime (the driver sends it as a temporal value),
    when it is in the form dagmca writes (UTC, milliseconds), which reads back the same;
    any other text stays text."""
    if key in TIME_KEYS and isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            return value
        if when.tzinfo is not None and _iso(when) == value:
            return when
    return value


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds")


def from_temporal(value: Any) -> Any:
    """A temporal value read back as the ISO string the records carry (UTC, milliseconds)."""
    # imported here: the driver takes a third of a second to import, and the embedded
    # store's Cypher uses this module's builders without it
    import neo4j.time

    if isinstance(value, neo4j.time.DateTime):
        native = value.to_native()
        return _iso(native if native.tzinfo is not None else native.replace(tzinfo=UTC))
    return value
