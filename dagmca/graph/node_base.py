"""The base of every node kind: a stable id, a session and a creation time, and the flat
record a store keeps (Neo4j's properties are scalars or lists of scalars)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field

from dagmca.graph.schema import JSONScalar, NodeKind, NodeRecord, Strict, utcnow


def renamed(data: Any, **new_names: str) -> Any:
    """A stored node's properties (or a model's input) with each property an older
    version named otherwise (`old=new`) under today's name; the new name wins where a
    record has both."""
    if not isinstance(data, dict) or not any(old in data for old in new_names):
        return data
    data = dict(data)
    for old, new in new_names.items():
        if old in data:
            value = data.pop(old)
            data.setdefault(new, value)
    return data


def _flatten(value: Any) -> JSONScalar | list[str] | None:
    """Neo4j properties are scalars or lists of scalars: anything richer becomes JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class GraphNode(Strict):
    """Base of every node kind: stable id, session, creation time."""

    KIND: ClassVar[NodeKind]

    id: str
    session: str
    created_at: str = Field(default_factory=utcnow)

    def extra_labels(self) -> tuple[str, ...]:
        return ()

    def to_record(self) -> NodeRecord:
        props: dict[str, JSONScalar | list[str]] = {}
        for key, value in self.model_dump(mode="json", exclude={"id", "session", "created_at"}).items():
            flat = _flatten(value)
            if flat is not None:  # Neo4j drops null properties; so do we.
                props[key] = flat
        return NodeRecord(
            id=self.id,
            kind=self.KIND,
            session=self.session,
            created_at=self.created_at,
            labels=self.extra_labels(),
            props=props,
        )
