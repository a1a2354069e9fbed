"""Revisiting open stubs when a new node arrives (DESIGN §1.7): each open stub the
prefilter passes is judged against the new node's text — answered (superseded, with
the answering sentence), relevant (explored by the caller) or still open — and every
check is recorded with its method, similarity, verdict and reason."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dagmca.debate.dag import judge
from dagmca.debate.events import StubChecked
from dagmca.debate.state import SessionState
from dagmca.models import EdgeRecord, EdgeType, GraphNode, RevisitCheck, TensionNode, TensionStatus


async def check(
    state: SessionState,
    node: GraphNode,
    text: str,
    can_revisit: Callable[[TensionNode], bool],
    *,
    once: bool = False,
) -> list[TensionNode]:
    """Check every open stub against `node` (whose text is `text`); return the stubs it
    made relevant, in order, already counted against --max-revisits. `can_revisit` says
    whether a relevant stub may still be explored (revisits, depth and budget left)."""
    st = state
    relevant: list[TensionNode] = []
    label = f"New text: {node.KIND.value.lower()} {node.id.rsplit('/', 1)[-1]}"
    async with st.revisit_lock:
        # A debate's own flags are what it left open, not what it answered.
        # by id: the order they were flagged in depends on which sibling ran faster
        open_stubs = sorted((t for t in st.open_stubs() if t.debate != node.id), key=lambda t: t.id)
        if once:  # checked against this node by an earlier run: that check stands
            open_stubs = [t for t in open_stubs if all(c.after != node.id for c in t.revisit_checks)]
        # a long text (a new passage, a long answer) is compared piece by piece
        sims = [
            float(s) for s in await st.embedder.abest_similarities([t.question for t in open_stubs], text)
        ]
        judged = judge.most_similar(st.config, sims)
        # Judged together; applied in the stubs' order, so revisits are counted the same
        # way whatever order the verdicts arrive in.
        decisions = await asyncio.gather(
            *(
                judge.stub(st, stub, label, text, sim) if i in judged else judge.not_checked(st.config, sim)
                for i, (stub, sim) in enumerate(zip(open_stubs, sims, strict=True))
            )
        )
        for stub, decision in zip(open_stubs, decisions, strict=True):
            edges: list[EdgeRecord] = []
            reason = decision.reason
            if decision.verdict == "answered":
                outcome = "superseded"
                stub.status = TensionStatus.SUPERSEDED
                edges.append(st.edge(node.id, stub.id, EdgeType.SUPERSEDES, **decision.props()))
            elif decision.verdict == "relevant" and can_revisit(stub):
                outcome = "relevant"
                st.revisits_used += 1
                relevant.append(stub)
            else:
                outcome = "open"
                if decision.verdict == "relevant":
                    reason = f"{reason} (relevant, but no revisit, depth or budget left)"
            check = RevisitCheck(
                after=node.id,
                similarity=round(decision.similarity, 4),
                outcome=outcome,
                reason=reason,
                method=decision.method,
                verdict=decision.verdict,
                answering_sentence=decision.claim,
            )
            edges.append(checked_against(st, stub, check))
            stub.revisit_checks.append(check)
            st.emit(
                StubChecked(
                    stub=stub.id,
                    question=stub.question,
                    outcome=outcome,
                    after=node.id,
                    similarity=round(decision.similarity, 2),
                    method=decision.method.value,
                    reason=reason,
                )
            )
            st.write([stub], edges)
    return relevant


def checked_against(st: SessionState, stub: TensionNode, check: RevisitCheck) -> EdgeRecord:
    """The check as a relationship from the stub to the node it was checked against,
    keyed by its place in the stub's `revisit_checks`."""
    return st.edge(
        stub.id,
        check.after,
        EdgeType.CHECKED_AGAINST,
        key=str(len(stub.revisit_checks)),
        similarity=check.similarity,
        verdict=check.verdict,
        decision=check.outcome,
        reason=check.reason,
        method=check.method.value,
        at=check.at,
    )
