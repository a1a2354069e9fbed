"""Node-link JSON: {"nodes": [{"id", "kind", ...}], "edges": [{"source", "target", "type", ...}]}."""

from __future__ import annotations

from typing import Any

from dagmca.store.base import GraphStore


def to_json(store: GraphStore, session: str) -> dict[str, Any]:
    nodes = []
    for n in store.nodes(session):
        nodes.append(
            {
                "id": n.id,
                "kind": n.kind.value,
                "labels": [n.kind.value, *n.labels],
                "session": n.session,
                "created_at": n.created_at,
                **n.props,
            }
        )
    edges = [
        {"source": e.source, "target": e.target, "type": e.type.value, **e.props}
        for e in store.edges(session)
    ]
    return {"session": session, "nodes": nodes, "edges": edges}
