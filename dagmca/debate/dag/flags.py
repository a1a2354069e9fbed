"""A flag's edges and the judged check of a branch flag that restates its question."""

from __future__ import annotations

from dagmca.debate.dag import judge
from dagmca.debate.events import DuplicateChecked
from dagmca.debate.state import SessionState
from dagmca.debate.state.handles import Handles
from dagmca.graph import EdgeRecord, EdgeType, TensionNode, TensionStatus
from dagmca.similarity.counts import EmbedPhase


def flagged_at(handles: Handles, tension: str, turn: str, lens: str) -> EdgeRecord:
    """Keyed by the observer: a second observer's flag of the same turn is its own edge."""
    return handles.edge(tension, turn, EdgeType.FLAGGED_AT, key=lens, observer=lens)


async def restating(state: SessionState, explored: TensionNode, flag: TensionNode) -> judge.Decision:
    """A branch's new flag (not written yet) whose question the degeneration guard found
    restating the question the branch explores: whether the two ask the same is a
    judged decision, as for any two questions (the guard only counts shared wording).
    `duplicate`: the flag is written as a duplicate of the explored tension, which is
    flagged at its turn too. Otherwise the caller keeps it (`distinct`) or, with no
    verdict, drops it as the guard would."""
    sims = await state.handles.embedder.asimilarities(
        flag.question, [explored.question], phase=EmbedPhase.FLAGS
    )
    similarity = round(float(sims[0]), 4)
    decision = await judge.duplicate(state, explored, flag, similarity)
    merged = decision.verdict == "duplicate"
    if merged:
        flag.status = TensionStatus.DUPLICATE
        flag.duplicate_of = explored.id
        flag.dropped_reason = (
            f"asks what {explored.id}, the question its debate explores, asks: {decision.reason}"
        )
        lens, turn = flag.flags[0].split("@", 1)
        explored.flags = sorted({*explored.flags, *flag.flags})
        edges = [
            flagged_at(state.handles, flag.id, turn, lens),
            state.handles.edge(flag.id, explored.id, EdgeType.DUPLICATES, **decision.props()),
            flagged_at(state.handles, explored.id, turn, lens),
        ]
        state.write([flag, explored], edges)
    state.handles.emit(
        DuplicateChecked(
            stub=flag.id,
            question=flag.question,
            twin=explored.id,
            twin_question=explored.question,
            merged=merged,
            similarity=round(similarity, 2),
            method=decision.method.value,
            reason=decision.reason,
            verdict=decision.verdict,
            degenerate=decision.degenerate,
        )
    )
    return decision
