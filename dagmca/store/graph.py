"""Loading a session from any store into networkx, for algorithms and exports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from dagmca.models import EdgeRecord, NodeRecord
from dagmca.store.base import GraphStore


def load_graph(store: GraphStore, session: str) -> Any:
    """A `networkx.MultiDiGraph`: node attributes are kind, labels, session,
    created_at and the properties; each edge is keyed by its type."""
    return build_graph(session, store.nodes(session), store.edges(session))


def build_graph(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> Any:
    g = nx.MultiDiGraph(session=session)
    for n in nodes:
        g.add_node(
            n.id,
            kind=n.kind.value,
            labels=list(n.labels),
            session=n.session,
            created_at=n.created_at,
            **n.props,
        )
    for e in edges:
        g.add_edge(e.source, e.target, key=e.type.value, type=e.type.value, **e.props)
    return g
