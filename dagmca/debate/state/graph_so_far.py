"""The graph a session has built so far: the nodes it wrote (or, on a revisit, reloaded),
kept in memory by kind, and the debates still running."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dagmca.debate.outcomes import DebateOutcome
from dagmca.graph import (
    DebateNode,
    EdgeRecord,
    EdgeType,
    FinalNode,
    GraphNode,
    SessionNode,
    SynthesisNode,
    TensionNode,
    TensionStatus,
)


@dataclass(eq=False)
class GraphSoFar:
    session: SessionNode | None = None
    debates: dict[str, DebateNode] = field(default_factory=dict)
    tensions: dict[str, TensionNode] = field(default_factory=dict)
    # the same tensions by debate, in the order they were recorded
    tensions_of: dict[str, dict[str, TensionNode]] = field(default_factory=dict)
    syntheses: dict[str, SynthesisNode] = field(default_factory=dict)
    outcomes: dict[str, DebateOutcome] = field(default_factory=dict)  # debate id -> what it produced
    # (later, earlier, reason) of branch pairs judged to contradict, for the integrator
    contradictions: list[tuple[DebateNode, DebateNode, str]] = field(default_factory=list)
    final: FinalNode | None = None
    node_ids: set[str] = field(default_factory=set)  # every node written so far (--max-nodes)
    agents: set[str] = field(default_factory=set)  # the Agent nodes written so far
    # debates made and not yet run to their end (the budget keeps a round for each)
    waiting: set[str] = field(default_factory=set)
    # branches made and not yet committed (explore.py): their flags are not open stubs
    # to anyone else yet, as which of them a running debate has flagged so far depends
    # on latency
    uncommitted: set[str] = field(default_factory=set)

    def track(self, nodes: Sequence[GraphNode]) -> None:
        """Keep written (or, on a revisit, reloaded) nodes in the session's memory."""
        self.node_ids.update(n.id for n in nodes)
        for n in nodes:
            if isinstance(n, DebateNode):
                self.debates[n.id] = n
            elif isinstance(n, TensionNode):
                self.tensions[n.id] = n
                self.tensions_of.setdefault(n.debate, {})[n.id] = n
            elif isinstance(n, SynthesisNode):
                self.syntheses[n.id] = n

    def track_contradictions(self, edges: Sequence[EdgeRecord]) -> None:
        """Rebuild the pairs judged to contradict from their stored CONTRADICTS edges
        (later -> earlier, the judge's reason): a reloaded session's final integration
        gives them with both positions, as the run that judged them did."""
        known = {(later.id, earlier.id) for later, earlier, _ in self.contradictions}
        for e in edges:
            if e.type is not EdgeType.CONTRADICTS or (e.source, e.target) in known:
                continue
            later, earlier = self.debates.get(e.source), self.debates.get(e.target)
            if later is not None and earlier is not None:
                self.contradictions.append((later, earlier, str(e.props.get("reason", ""))))
                known.add((e.source, e.target))

    def room_for_debates(self, cap: int | None) -> int | None:
        """How many more debates fit under a cap of `cap` nodes (None: no cap), estimated
        from the nodes per debate that has run, keeping room for those waiting to run and
        two nodes for a synthesis and the final."""
        if cap is None:
            return None
        waiting = len(self.waiting)
        per_debate = len(self.node_ids) / max(1, len(self.debates) - waiting)
        return max(0, int((cap - 2 - len(self.node_ids)) // max(1.0, per_debate)) - waiting)

    def open_stubs(self) -> list[TensionNode]:
        """The open stubs of the committed debates."""
        stubs = (t for t in self.tensions.values() if t.status is TensionStatus.STUB)
        return [t for t in stubs if t.debate not in self.uncommitted]
