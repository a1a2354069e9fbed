"""A study's findings as the store holds them (`dagmca stability`): its Finding nodes,
and the study read whole, as an export takes it."""

from __future__ import annotations

from dagmca.graph import FINDINGS_SESSION, EdgeRecord, NodeKind, NodeRecord
from dagmca.store.base import GraphStore


def study_findings(store: GraphStore, study: str) -> list[NodeRecord]:
    """The Finding nodes of `study`, in the order they were written."""
    return [n for n in store.nodes(FINDINGS_SESSION, NodeKind.FINDING) if n.props.get("study") == study]


def studies(store: GraphStore) -> list[str]:
    """The studies the store holds findings of, oldest first."""
    return list(dict.fromkeys(str(n.props.get("study", "")) for n in store.nodes(FINDINGS_SESSION)))


def study_records(store: GraphStore, study: str) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """A study as an export reads it: its findings, their relationships and the pairs it
    judged, then every node those reach (the sessions, the members)."""
    nodes = study_findings(store, study)
    ids = {n.id for n in nodes}
    edges = [e for e in store.edges(FINDINGS_SESSION) if e.source in ids]
    for end in dict.fromkeys(x for e in edges for x in (e.source, e.target) if x not in ids):
        node = store.get_node(end)
        if node is not None:
            nodes.append(node)
            ids.add(end)
    return nodes, edges
