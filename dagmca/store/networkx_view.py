"""Loading a session from any store into networkx, for algorithms and exports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dagmca.graph import EdgeRecord, NodeRecord
from dagmca.graph.store_nodes import SHARED_SESSIONS
from dagmca.store.base import GraphStore

# node attributes every node has; a property of the same name is not copied over them
_NODE_KEYS = frozenset({"kind", "labels", "session", "created_at"})


def load_graph(store: GraphStore, session: str) -> Any:
    """A `networkx.MultiDiGraph` of a stored session (see `build_graph`)."""
    return build_graph(session, *session_records(store, session))


def session_records(store: GraphStore, session: str) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """A session's nodes and edges, and after its nodes the ones outside it that its
    edges reach (the personas its seats play): read this way a session is whole, for
    exports, pushes and checks. An end that is nowhere in the store stays missing."""
    nodes, edges = store.nodes(session), store.edges(session)
    ids = {n.id for n in nodes}
    outside = dict.fromkeys(end for e in edges for end in (e.source, e.target) if end not in ids)
    for end in outside:
        node = store.get_node(end)
        if node is not None:
            nodes.append(node)
    return nodes, edges


def store_records(store: GraphStore) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """Every session of the store, with the personas, the evaluations, the swarms and
    the studies' findings: the corpus as one graph (a build's cross-session
    relationships included once)."""
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for s in store.sessions():
        nodes += store.nodes(s.id)
        edges += store.edges(s.id)
    for shared in SHARED_SESSIONS:
        nodes += store.nodes(shared)
        edges += store.edges(shared)
    return nodes, edges


def build_graph(
    session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], *, flat: bool = False
) -> Any:
    """A `networkx.MultiDiGraph`: node attributes are kind, labels, session, created_at
    and the properties; each edge is keyed by `edge_key`, with its type and properties.

    `flat`: every attribute a str, int, float or bool, as GraphML and GEXF require:
    labels joined with ':' (kind first), lists as JSON, and an edge's type under
    `relationship` (GEXF reserves an edge's `type` for directed/undirected)."""

    def value(v: Any) -> Any:
        return json.dumps(v, ensure_ascii=False) if flat and isinstance(v, list) else v

    import networkx as nx  # here: every command would pay a quarter of a second to import it

    type_key = "relationship" if flat else "type"
    g = nx.MultiDiGraph(session=session)
    for n in nodes:
        g.add_node(
            n.id,
            kind=n.kind.value,
            labels=":".join((n.kind.value, *n.labels)) if flat else list(n.labels),
            session=n.session,
            created_at=n.created_at,
            **{k: value(v) for k, v in n.props.items() if k not in _NODE_KEYS},
        )
    for e in edges:
        g.add_edge(
            e.source,
            e.target,
            key=edge_key(e),
            **{type_key: e.type.value},
            # networkx reserves `key` (the edge's own key here): the property is `edge_key`
            **{("edge_key" if k == "key" else k): value(v) for k, v in e.props.items()},
        )
    return g


def edge_key(e: EdgeRecord) -> str:
    """An edge's networkx key: its type, and its own key when it has one (two observers'
    FLAGGED_AT between one tension and one turn are two edges)."""
    return f"{e.type.value}#{e.key}" if e.key else e.type.value
