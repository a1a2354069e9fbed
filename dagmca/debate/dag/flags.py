"""What a new flag is to the tensions so far: its edges, the tension of the debate's line
it restates (then it is that tension flagged again), the judged check of a branch flag
that restates the question its branch explores, and the cap on a debate's open stubs."""

from __future__ import annotations

from dagmca.debate.dag import judge
from dagmca.debate.events import DuplicateChecked, TensionDropped
from dagmca.debate.state import SessionState
from dagmca.debate.state.handles import Handles
from dagmca.graph import DebateNode, EdgeRecord, EdgeType, TensionNode, TensionStatus
from dagmca.llm.degenerate import degeneration
from dagmca.prompts import templates as tpl
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


def explored_tension(state: SessionState, debate: DebateNode, question: str) -> TensionNode | None:
    """The tension `debate` explores, when `question` echoes its wording and not the
    observers' instructions: whether the two ask the same is then the judge's call
    (`restating`), not the guard's. None on the main debate, for a question that also
    echoes the instructions, and with --judge embedding (the guard's rule stands)."""
    parts = debate.id.split("/")
    ancestors = ["/".join(parts[:k]) for k in range(1, len(parts))]
    explored = [
        t
        for d in ancestors
        for t in state.graph.tensions_of.get(d, {}).values()
        if t.question == debate.question
    ]
    if not explored or state.handles.config.judge != "llm":
        return None
    if degeneration(question, tpl.observer_scaffolding(""), share_limit=0.5) is not None:
        return None
    return explored[-1]


async def twin_in_line(state: SessionState, debate: DebateNode, question: str) -> TensionNode | None:
    """An earlier tension of `debate`'s line that `question` restates (a flag merged as a
    duplicate stands for the tension it duplicates), or None."""
    # A near-duplicate is looked for across the debate's line: a branch re-raising the
    # question it explores, or one its ancestors hold, is one tension flagged twice, not
    # two. (Not its siblings': they run at the same time, so which flagged first would
    # depend on latency, and the graph must not.) The debate's own flags come here one at
    # a time, in a fixed order (the monitor's checks); its ancestors are finished. So no
    # lock: other debates record theirs meanwhile, and their encodes batch.
    graph = state.graph
    parts = debate.id.split("/")
    line = ("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    earlier = [t for d in line for t in graph.tensions_of.get(d, {}).values()]
    if not earlier:
        return None
    sims = await state.handles.embedder.asimilarities(
        question, [t.question for t in earlier], phase=EmbedPhase.FLAGS
    )
    best = int(sims.argmax())
    if sims[best] < state.handles.config.duplicate_threshold:
        return None
    twin = earlier[best]
    if twin.status is TensionStatus.DUPLICATE and twin.duplicate_of in graph.tensions:
        return graph.tensions[twin.duplicate_of]
    return twin


def cap_open_stubs(state: SessionState, debate: DebateNode) -> None:
    """At most --max-open-stubs open stubs per debate: past it, the least urgent (of
    equal urgency, the latest) is dropped: kept in the graph with its reason, counted,
    never revisited. Flags are recorded in a fixed order, so the same ones drop whatever
    the latency."""
    cap = state.handles.config.max_open_stubs
    open_stubs = [
        t for t in state.graph.tensions_of.get(debate.id, {}).values() if t.status is TensionStatus.STUB
    ]
    if len(open_stubs) <= cap:
        return
    drop = min(reversed(open_stubs), key=lambda t: t.urgency)  # the first minimum: the latest
    drop.status = TensionStatus.DROPPED
    drop.dropped_reason = (
        f"urgency {drop.urgency} was the lowest of {len(open_stubs)} open stubs of its debate "
        f"(--max-open-stubs {cap})"
    )
    # counted from the graph (the summary's `tensions` row), not with the degeneration
    # guard's drops: a dropped stub is not degenerate
    state.write([drop])
    state.handles.emit(
        TensionDropped(
            debate=debate.id, observer=drop.observer, question=drop.question, reason=drop.dropped_reason
        )
    )
