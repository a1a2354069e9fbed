"""Revisiting open stubs when a new node arrives (DESIGN §1.7): each open stub is
checked against the new node's text and recorded as superseded, relevant (to be
explored by the caller) or still open, with the reason."""

from __future__ import annotations

from collections.abc import Callable

from dagmca.debate.events import StubChecked
from dagmca.debate.state import SessionState
from dagmca.models import EdgeRecord, EdgeType, GraphNode, RevisitCheck, TensionNode, TensionStatus


async def check(
    state: SessionState, node: GraphNode, text: str, can_revisit: Callable[[TensionNode], bool]
) -> list[TensionNode]:
    """Check every open stub against `node` (whose text is `text`); return the stubs it
    made relevant, in order, already counted against --max-revisits. `can_revisit` says
    whether a relevant stub may still be explored (revisits, depth and budget left)."""
    st, cfg = state, state.config
    relevant: list[TensionNode] = []
    async with st.revisit_lock:
        # A debate's own flags are what it left open, not what it answered.
        for stub in (t for t in st.open_stubs() if t.debate != node.id):
            sim = await st.embedder.asimilarity(stub.question, text)
            edges: list[EdgeRecord] = []
            if sim >= cfg.supersede_threshold:
                outcome = "superseded"
                reason = f"answered: cosine {sim:.2f} >= supersede threshold {cfg.supersede_threshold}"
                stub.status = TensionStatus.SUPERSEDED
                edges.append(st.edge(node.id, stub.id, EdgeType.SUPERSEDES, similarity=round(sim, 4)))
            elif sim >= cfg.revisit_threshold and can_revisit(stub):
                outcome = "relevant"
                reason = f"relevant: cosine {sim:.2f} >= revisit threshold {cfg.revisit_threshold}; explored"
                st.revisits_used += 1
                relevant.append(stub)
            else:
                outcome = "open"
                reason = f"cosine {sim:.2f} below the revisit threshold {cfg.revisit_threshold}"
                if sim >= cfg.revisit_threshold:
                    reason = "relevant, but no revisit, depth or budget left"
            stub.revisit_checks.append(
                RevisitCheck(after=node.id, similarity=round(sim, 4), outcome=outcome, reason=reason)
            )
            st.emit(
                StubChecked(
                    stub=stub.id,
                    question=stub.question,
                    outcome=outcome,
                    after=node.id,
                    similarity=round(sim, 2),
                )
            )
            st.write([stub], edges)
    return relevant
