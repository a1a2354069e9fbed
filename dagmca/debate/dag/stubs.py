"""Revisiting open stubs when a new node arrives: each open stub the
prefilter passes is judged against the new node's text — answered (superseded, with
the answering sentence), relevant (explored by the caller) or still open — and every
check is recorded with its method, similarity, verdict and reason."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dagmca.debate.dag import judge
from dagmca.debate.events import StubChecked
from dagmca.debate.state import SessionState
from dagmca.debate.state.handles import Handles
from dagmca.graph import EdgeRecord, EdgeType, GraphNode, RevisitCheck, TensionNode, TensionStatus
from dagmca.similarity.counts import EmbedPhase

# one new node's checks: the node, the stubs checked, their verdicts
Checks = list[tuple[GraphNode, list[TensionNode], list[judge.Decision]]]


async def check(
    state: SessionState,
    news: list[tuple[GraphNode, str]],
    can_revisit: Callable[[TensionNode], bool],
    *,
    once: bool = False,
) -> list[TensionNode]:
    """Check every open stub against each new node (with its text): one node, or an
    exploration's syntheses, their judge calls made together (`judged`), then applied in
    order (`apply`). Returns the stubs made relevant, in order, already counted against
    --max-revisits; `can_revisit` says whether a relevant stub may still be explored
    (revisits, depth and budget left). With `once`, only the stubs not checked against
    the node by an earlier run. Callers that judge something else at the same time
    hold `state.revisit_lock` around both halves themselves."""
    async with state.revisit_lock:
        return apply(state, await judged(state, news, once=once), can_revisit)


async def judged(state: SessionState, news: list[tuple[GraphNode, str]], *, once: bool = False) -> Checks:
    """Each node against the stubs open before the first of them, judged together."""
    st = state
    # by id: the order they were flagged in depends on which sibling ran faster
    open_before = sorted(st.graph.open_stubs(), key=lambda t: t.id)
    checks = []
    for node, text in news:
        # A debate's own flags are what it left open, not what it answered.
        open_stubs = [t for t in open_before if t.debate != node.id]
        if once:  # checked against this node by an earlier run: that check stands
            open_stubs = [t for t in open_stubs if all(c.after != node.id for c in t.revisit_checks)]
        # a long text (a new passage, a long answer) is compared piece by piece
        questions = [t.question for t in open_stubs]
        found = await st.handles.embedder.abest_similarities(questions, text, phase=EmbedPhase.STUBS)
        sims = [float(s) for s in found]
        checks.append((node, text, open_stubs, sims))
    verdicts = await asyncio.gather(
        *(_judge(st, node, text, stubs, sims) for node, text, stubs, sims in checks)
    )
    return [(node, stubs, v) for (node, _, stubs, _), v in zip(checks, verdicts, strict=True)]


def apply(
    state: SessionState, checks: Checks, can_revisit: Callable[[TensionNode], bool]
) -> list[TensionNode]:
    """The verdicts, node by node, in order, so revisits are counted the same way
    whatever order they arrived in. A stub that left the open stubs meanwhile (an
    earlier node answered it or made it relevant, or it was merged as a duplicate) is
    not checked against a later one: its verdict there is dropped."""
    relevant: list[TensionNode] = []
    taken: set[str] = set()  # made relevant by an earlier node: a revisit branch's now
    touched: dict[str, TensionNode] = {}
    edges: list[EdgeRecord] = []
    for node, open_stubs, decisions in checks:
        still = [
            (stub, decision)
            for stub, decision in zip(open_stubs, decisions, strict=True)
            if stub.status is TensionStatus.STUB and stub.id not in taken
        ]
        made = _apply(state, node, still, can_revisit, edges)
        touched.update((stub.id, stub) for stub, _ in still)
        relevant += made
        taken.update(t.id for t in made)
    # one write: a stub carries every check in its `revisit_checks`, so writing it once
    # per check re-serialized that growing list each time (a level's dozen nodes against
    # sixty open stubs: 700 writes, on the event loop, between two levels)
    if touched:
        state.write(list(touched.values()), edges)
    return relevant


async def _judge(
    st: SessionState, node: GraphNode, text: str, open_stubs: list[TensionNode], sims: list[float]
) -> list[judge.Decision]:
    label = f"New text: {node.KIND.value.lower()} {node.id.rsplit('/', 1)[-1]}"
    judged = judge.most_similar(st.handles.config, sims)
    return list(
        await asyncio.gather(
            *(
                judge.stub(st, stub, label, text, sim)
                if i in judged
                else judge.not_checked(st.handles.config, sim)
                for i, (stub, sim) in enumerate(zip(open_stubs, sims, strict=True))
            )
        )
    )


def _apply(
    st: SessionState,
    node: GraphNode,
    verdicts: list[tuple[TensionNode, judge.Decision]],
    can_revisit: Callable[[TensionNode], bool],
    edges: list[EdgeRecord],
) -> list[TensionNode]:
    """Each verdict on the stub, its check's edges added to `edges` (written by the
    caller, with the stubs)."""
    relevant: list[TensionNode] = []
    for stub, decision in verdicts:
        reason = decision.reason
        if decision.verdict == "answered":
            outcome = "superseded"
            stub.status = TensionStatus.SUPERSEDED
            edges.append(st.handles.edge(node.id, stub.id, EdgeType.SUPERSEDES, **decision.props()))
        elif decision.verdict == "relevant" and can_revisit(stub):
            outcome = "relevant"
            st.counts.revisits_used += 1
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
            degenerate=decision.degenerate,
        )
        edges.append(checked_against(st.handles, stub, check))
        stub.revisit_checks.append(check)
        st.handles.emit(
            StubChecked(
                stub=stub.id,
                question=stub.question,
                outcome=outcome,
                after=node.id,
                similarity=round(decision.similarity, 2),
                method=decision.method.value,
                reason=reason,
                degenerate=decision.degenerate,
            )
        )
    return relevant


def checked_against(handles: Handles, stub: TensionNode, check: RevisitCheck) -> EdgeRecord:
    """The check as a relationship from the stub to the node it was checked against,
    keyed by its place in the stub's `revisit_checks`."""
    return handles.edge(
        stub.id,
        check.after,
        EdgeType.CHECKED_AGAINST,
        key=str(len(stub.revisit_checks)),
        similarity=check.similarity,
        verdict=check.verdict,
        decision=check.outcome,
        reason=check.reason,
        method=check.method.value,
        degenerate=check.degenerate,
        at=check.at,
    )
