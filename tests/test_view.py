"""The viewer's first view (`export.view.first_view`): about 150 nodes whatever the
session's size, and every node of the session reachable from it."""

from __future__ import annotations

import pytest

from dagmca.export.view import VISIBLE, first_view
from dagmca.graph import EdgeRecord, EdgeType, NodeKind, NodeRecord
from tests.support.synthetic import synthetic_session


def reachable(nodes: list[NodeRecord], edges: list[EdgeRecord]) -> tuple[set[str], int]:
    """What unfolding every group reaches from the first view, and the number of nodes
    and group nodes the first view draws."""
    view = first_view(nodes, edges)
    groups = {g.id: g for g in view.groups}
    on: dict[str, list[str]] = {}
    for g in view.groups:
        on.setdefault(g.anchor, []).append(g.id)
    comes: dict[str, list[str]] = {}
    for node, anchor in view.comes_with.items():
        comes.setdefault(anchor, []).append(node)
    drawn_groups = [g for g in view.groups if g.anchor in view.shown]
    seen: set[str] = set()
    todo = list(view.shown)
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        todo += comes.get(item, []) + on.get(item, [])
        if item in groups:
            todo += groups[item].members
    return seen, len(view.shown) + len(drawn_groups)


@pytest.mark.parametrize(
    ("size", "tensions"),
    [(300, 20), (2_727, 116), (20_000, 20)],  # small; a strong endpoint's session; the benchmark's
)
@pytest.mark.slow
def test_the_first_view_is_small_and_reaches_every_tension_and_debate(size: int, tensions: int) -> None:
    nodes, edges = synthetic_session(size, int(size * 1.5), tensions=tensions)
    seen, drawn = reachable(nodes, edges)
    assert drawn <= VISIBLE
    folded = {NodeKind.ROUND, NodeKind.TURN, NodeKind.AGENT, NodeKind.PERSONA}  # unfolded by kind
    assert {n.id for n in nodes if n.kind not in folded} <= seen


def test_a_debate_shows_its_most_urgent_open_questions_and_its_explored_one() -> None:
    nodes, edges = synthetic_session(2_727, 4_000, tensions=116)
    view = first_view(nodes, edges)
    by_id = {n.id: n for n in nodes}
    main = next(n.id for n in nodes if n.id.endswith("/main"))
    assert main in view.shown and all(n.id in view.shown for n in nodes if n.kind is NodeKind.DEBATE)
    explored = {e.target for e in edges if e.type is EdgeType.EXPLORES}
    assert explored and explored <= view.shown
    stubs = [
        n for n in nodes if n.kind is NodeKind.TENSION and n.props["debate"] == main and n.id not in explored
    ]
    shown = [t for t in stubs if t.id in view.shown]
    assert 1 <= len(shown) <= 3
    assert min(float(t.props["urgency"]) for t in shown) >= max(
        float(t.props["urgency"]) for t in stubs if t.id not in view.shown
    )
    group = next(g for g in view.groups if g.anchor == main)
    assert group.caption == f"+{len(stubs) - len(shown)} open questions"
    assert all(by_id[m].kind is NodeKind.TENSION for m in group.members)


@pytest.mark.slow
def test_debates_beyond_the_budget_fold_under_their_nearest_shown_ancestor() -> None:
    nodes, edges = synthetic_session(20_000, 30_000)
    view = first_view(nodes, edges)
    debates = [n.id for n in nodes if n.kind is NodeKind.DEBATE]
    folded = [g for g in view.groups if g.kind == "debates"]
    assert folded and sum(len(g.members) for g in folded) == sum(1 for d in debates if d not in view.shown)
    assert all(g.anchor in view.shown for g in folded)
    assert all(g.caption.startswith(f"+{len(g.members)} more debate") for g in folded)
