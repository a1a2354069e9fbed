"""What the offline viewer shows when it opens, whatever the session's size.

A strong endpoint's session holds thousands of nodes, most of them open stubs: drawn
all at once they are a grey line with no readable label. The first view holds about
`VISIBLE` nodes: the sessions, their sections, syntheses, integrations and finals, the
debates (nearest the main debate first), the tensions they explored, and per debate
its most urgent open questions. The rest of a debate's tensions are folded into one
group node ("+143 open questions"), debates beyond the budget into one group under
their nearest shown ancestor; both unfold on click. Rounds, turns, agents and
personas start folded too (a debate unfolds its rounds and turns; the legend the
rest). A study's findings are drawn the most recurring first, the rest one group.
Nothing is dropped: every node stays in the page's data, for the search and the side
panel.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from dagmca.graph import EdgeRecord, EdgeType, NodeKind, NodeRecord, TensionStatus

VISIBLE = 150
STUBS_SHOWN = 3  # open questions shown per debate at most, the most urgent
ALWAYS = (NodeKind.SESSION, NodeKind.SECTION, NodeKind.SYNTHESIS, NodeKind.INTEGRATION, NodeKind.FINAL)
FINDINGS_SHOWN = 40  # a study's findings drawn at first, the most recurring; the rest one group


@dataclass
class Group:
    """Folded nodes, drawn as one node hung on `anchor` until unfolded."""

    id: str
    # "stubs" (a debate's remaining tensions), "debates" (deeper debates) or "findings"
    # (a study's less recurring findings)
    kind: str
    anchor: str
    members: list[str] = field(default_factory=list)

    @property
    def caption(self) -> str:
        n = len(self.members)
        if self.kind == "debates":
            return f"+{n} more debate{'s' if n != 1 else ''}"
        if self.kind == "findings":
            return f"+{n} more finding{'s' if n != 1 else ''}"
        return f"+{n} open question{'s' if n != 1 else ''}"

    def as_data(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "anchor": self.anchor,
            "members": self.members,
            "caption": self.caption,
        }


@dataclass
class View:
    shown: set[str]  # drawn when the page opens
    groups: list[Group]
    group_of: dict[str, str]  # a folded node's group
    comes_with: dict[str, str]  # a node drawn whenever this one is: a debate's tensions


def _number(n: NodeRecord, key: str) -> float:
    value = n.props.get(key, 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def _urgency(n: NodeRecord) -> float:
    return _number(n, "urgency")


def _depth(d: NodeRecord) -> int:
    value = d.props.get("depth", 0)
    return value if isinstance(value, int) else 0


def _rank(t: NodeRecord) -> tuple[int, float]:
    """Open stubs first, most urgent first; then selected, then superseded."""
    status = t.props.get("status")
    first = 0 if status == TensionStatus.STUB.value else 1 if status == TensionStatus.SELECTED.value else 2
    return first, -_urgency(t)


def first_view(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], budget: int = VISIBLE) -> View:
    parent: dict[str, str] = {}
    explored_by: dict[str, str] = {}  # tension -> the debate that explored it
    for e in edges:
        if e.type is EdgeType.BRANCHES_FROM:
            parent.setdefault(e.source, e.target)
        elif e.type is EdgeType.EXPLORES:
            explored_by.setdefault(e.target, e.source)
    ids = {n.id for n in nodes}
    debates = sorted(
        (n for n in nodes if n.kind is NodeKind.DEBATE),
        key=lambda d: (_depth(d), 0 if d.id.endswith("/main") else 1),
    )  # stable: records come in creation order
    shown = {n.id for n in nodes if n.kind in ALWAYS}

    # Debates nearest the main debates first, each with the tension it explored and the
    # group of its other tensions, while they fill at most 60% of the view; a debate
    # shows only under a shown parent.
    room, used = int(budget * 0.6), len(shown)
    folded: list[NodeRecord] = []
    for d in debates:
        up = parent.get(d.id)
        main = up is None or up not in ids
        if main or (up in shown and used + 3 <= room):
            shown.add(d.id)
            used += 3
        else:
            folded.append(d)
    comes_with = {t: d for t, d in explored_by.items() if t in ids and d in ids}
    shown.update(t for t, d in comes_with.items() if d in shown)

    groups: dict[str, Group] = {}
    group_of: dict[str, str] = {}

    def fold(kind: str, anchor: str, member: str) -> None:
        group = groups.setdefault(f"group:{kind}:{anchor}", Group(f"group:{kind}:{anchor}", kind, anchor))
        group.members.append(member)
        group_of[member] = group.id

    # A study's findings, the most recurring first: as many as FINDINGS_SHOWN, the rest
    # one group hung on the last one shown.
    findings = sorted((n for n in nodes if n.kind is NodeKind.FINDING), key=lambda f: -_number(f, "rate"))
    shown.update(f.id for f in findings[:FINDINGS_SHOWN])
    for f in findings[FINDINGS_SHOWN:]:
        fold("findings", findings[FINDINGS_SHOWN - 1].id, f.id)

    for d in folded:  # under the nearest shown ancestor, else its session
        up = parent.get(d.id)
        while up is not None and up not in shown:
            up = parent.get(up)
        fold("debates", up if up in ids else d.session, d.id)

    # Every debate's most urgent open questions come with it; the rest are one group.
    others: dict[str, list[NodeRecord]] = defaultdict(list)
    for n in nodes:
        if n.kind is NodeKind.TENSION and n.id not in comes_with:
            debate = str(n.props.get("debate", ""))
            others[debate if debate in ids else n.session].append(n)
    n_shown = sum(1 for d in debates if d.id in shown)
    stub_groups = sum(1 for d in debates if d.id in shown and others.get(d.id))
    left = budget - len(shown) - len(groups) - stub_groups
    per = min(STUBS_SHOWN, max(0, left // max(1, n_shown)))
    of_debates = {d.id for d in debates}
    for debate, tensions in others.items():
        ranked = sorted(tensions, key=_rank)
        # a tension whose debate is not exported (a study's member) has no card to sit on:
        # they are all the group on their session
        shown_here = per if debate in of_debates else 0
        for t in ranked[:shown_here]:
            comes_with[t.id] = debate
            if debate in shown:
                shown.add(t.id)
        for t in ranked[shown_here:]:
            fold("stubs", debate, t.id)
    return View(shown, list(groups.values()), group_of, comes_with)
