"""Copy a session from one store to another (`dagmca push`)."""

from __future__ import annotations

from dagmca.store.base import GraphStore
from dagmca.store.networkx_view import session_records

BATCH = 1000


def push_session(source: GraphStore, target: GraphStore, session: str, batch: int = BATCH) -> tuple[int, int]:
    """Upsert every node (and the personas its seats play), then every edge, in creation
    order and in batches, so a second push changes nothing. Returns (nodes, edges) copied."""
    nodes, edges = session_records(source, session)
    for i in range(0, len(nodes), batch):
        target.write(nodes[i : i + batch])
    for i in range(0, len(edges), batch):
        target.write((), edges[i : i + batch])
    return len(nodes), len(edges)
