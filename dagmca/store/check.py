"""The graph schema's invariants, checked on a loaded session graph."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import networkx as nx

from dagmca.graph import (
    EVALUATION_SESSION,
    STRUCTURAL_EDGES,
    STUB_LABEL,
    EdgeRecord,
    EdgeType,
    NodeKind,
    NodeRecord,
)
from dagmca.store.base import GraphStore
from dagmca.store.ledger_check import check_claims
from dagmca.store.networkx_view import build_graph, session_records


def check_store(store: GraphStore, session: str) -> list[str]:
    """Broken invariants of a stored session; empty when all hold."""
    nodes, edges = session_records(store, session)
    problems = []
    # On the raw records: a graph would silently merge duplicate ids and invent
    # the missing end of a dangling edge.
    ids = [n.id for n in nodes]
    dupes = sorted(i for i, c in Counter(ids).items() if c > 1)
    if dupes:
        problems.append(f"duplicate node ids: {', '.join(dupes[:5])}")
    known = set(ids)
    for e in edges:
        for end in (e.source, e.target):
            if end not in known:
                problems.append(f"{e.type.value} edge points at missing node {end}")
    return problems + check_provenance(nodes, edges) + check_graph(build_graph(session, nodes, edges))


def check_provenance(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> list[str]:
    """Every flag, reference and revisit check the nodes say the run made is a keyed
    edge of its own: none collapsed into another, none lost. (Tensions stored before
    flags were recorded carry no `flags`, and are not held to it.)"""
    have = {(e.source, e.target, e.type, e.key) for e in edges}
    problems: list[str] = []

    def need(source: str, target: str, type_: EdgeType, key: str, what: str) -> None:
        if (source, target, type_, key) not in have:
            problems.append(f"{what}: no {type_.value} edge {source} -> {target} (key {key!r})")

    for n in nodes:
        if n.kind is NodeKind.TENSION and isinstance(n.props.get("flags"), list):
            for flag in n.props["flags"]:  # type: ignore[union-attr]
                observer, _, turn = str(flag).partition("@")
                need(n.id, turn, EdgeType.FLAGGED_AT, observer, f"flag {flag} of {n.id}")
            if twin := n.props.get("duplicate_of"):
                need(n.id, str(twin), EdgeType.DUPLICATES, "", f"duplicate {n.id}")
            checks = n.props.get("revisit_checks")
            for i, c in enumerate(json.loads(checks) if isinstance(checks, str) else []):
                need(n.id, c["after"], EdgeType.CHECKED_AGAINST, str(i), f"revisit check {i} of {n.id}")
        elif n.kind is NodeKind.TURN and isinstance(n.props.get("references"), list):
            debate = str(n.props.get("debate", ""))
            for target in n.props["references"]:  # type: ignore[union-attr]
                need(debate, str(target), EdgeType.REFERENCES, n.id, f"reference of {n.id}")
    return problems


def check_graph(g: Any) -> list[str]:
    problems: list[str] = []
    kinds = {k.value for k in NodeKind}
    types = {t.value for t in EdgeType}

    # The nodes of other sessions an edge reaches (another passage's session, whose
    # stub this one answered; the personas) are held to their own session's check.
    own_session = g.graph.get("session")

    def own(d: dict[str, Any]) -> bool:
        return own_session is None or d.get("session") == own_session

    def of_kind(kind: NodeKind) -> list[str]:
        return [n for n, d in g.nodes(data=True) if d.get("kind") == kind.value and own(d)]

    for n, d in g.nodes(data=True):
        if d.get("kind") not in kinds:
            problems.append(f"node {n} has unknown kind {d.get('kind')!r}")
        if not d.get("created_at"):
            problems.append(f"node {n} has no created_at")
    for u, v, t in g.edges(data="type"):
        if t not in types:
            problems.append(f"edge {u} -> {v} has unknown type {t!r}")

    sessions = of_kind(NodeKind.SESSION)
    if len(sessions) != 1:
        problems.append(f"expected one Session node, found {len(sessions)}")

    structural = nx.DiGraph()
    structural.add_edges_from((u, v) for u, v, t in g.edges(data="type") if t in STRUCTURAL_EDGES)
    try:
        cycle = nx.find_cycle(structural)
        problems.append("structural edges form a cycle: " + " -> ".join(u for u, _ in cycle))
    except nx.NetworkXNoCycle:
        pass

    def out_of_type(n: str, t: EdgeType) -> list[str]:
        return [v for _, v, k in g.out_edges(n, data="type") if k == t.value]

    def in_of_type(n: str, t: EdgeType) -> list[str]:
        return [u for u, _, k in g.in_edges(n, data="type") if k == t.value]

    debates = of_kind(NodeKind.DEBATE)
    mains = [d for d in debates if g.nodes[d].get("origin") == "main"]
    if sessions and len(mains) != 1:
        problems.append(f"expected one main Debate, found {len(mains)}")
    for d in debates:
        if not out_of_type(d, EdgeType.IN_SESSION):
            problems.append(f"debate {d} is not IN_SESSION")
        if g.nodes[d].get("origin") == "main":
            continue
        parents = out_of_type(d, EdgeType.BRANCHES_FROM)
        explores = out_of_type(d, EdgeType.EXPLORES)
        if len(parents) != 1:
            problems.append(f"branch {d} has {len(parents)} BRANCHES_FROM edges (expected 1)")
        if len(explores) != 1:
            problems.append(f"branch {d} has {len(explores)} EXPLORES edges (expected 1)")
        for t in explores:
            if g.nodes[t].get("kind") != NodeKind.TENSION.value:
                problems.append(f"branch {d} EXPLORES {t}, which is not a Tension")

    for s in of_kind(NodeKind.SYNTHESIS):
        if len(in_of_type(s, EdgeType.MERGES_INTO)) < 2:
            problems.append(f"synthesis {s} has fewer than two parents")

    for n, d in g.nodes(data=True):
        if not own(d):
            continue
        labels = d.get("labels") or []
        is_stub = STUB_LABEL in labels or (
            d.get("kind") == NodeKind.TENSION.value and d.get("status") == "stub"
        )
        if not is_stub:
            continue
        if d.get("kind") != NodeKind.TENSION.value:
            problems.append(f"stub {n} is not a Tension")
        elif STUB_LABEL not in labels or d.get("status") != "stub":
            problems.append(f"tension {n}: Stub label and status 'stub' disagree")
        if in_of_type(n, EdgeType.EXPLORES):
            problems.append(f"stub {n} is explored by a debate")
    return problems + check_claims(g, own)


def check_evaluation(store: GraphStore, eval_id: str) -> list[str]:
    """Broken invariants of a stored evaluation: one Evaluation node; every RAN edge
    from it to a Session; every JUDGED_AGAINST edge of it between two Finals, with a
    verdict and an order."""
    problems: list[str] = []
    node_id = f"{eval_id}/evaluation"
    node = store.get_node(node_id)
    if node is None or node.kind is not NodeKind.EVALUATION:
        problems.append(f"no Evaluation node {node_id}")
    for e in store.edges(EVALUATION_SESSION, EdgeType.RAN):
        if e.source != node_id:
            continue
        target = store.get_node(e.target)
        if target is None or target.kind is not NodeKind.SESSION:
            problems.append(f"RAN edge to {e.target}, which is not a Session")
    for e in store.edges(EVALUATION_SESSION, EdgeType.JUDGED_AGAINST):
        if e.props.get("eval_id") != eval_id:
            continue
        for end in (e.source, e.target):
            end_node = store.get_node(end)
            if end_node is None or end_node.kind is not NodeKind.FINAL:
                problems.append(f"JUDGED_AGAINST edge at {end}, which is not a Final")
        verdict, order = e.props.get("verdict"), e.props.get("order")
        # an order the judge did not answer, or answered unreadably, is kept as such
        if verdict not in ("win", "loss", "tie", "no_verdict", "unjudged") or order not in ("xy", "yx"):
            problems.append(f"JUDGED_AGAINST edge {e.source} -> {e.target} ({e.key}): no verdict or order")
    return problems
