"""Duplicate tensions across the session. An observer's flag merges on arrival only
with a near-restatement in its own debate's line (monitor.py): siblings run at the
same time, and which flagged first would depend on latency. So when a debate is
committed (the main debate when it ends; a branch in the order the branches were made,
chain.py), judged beside its stub checks and applied before them, each of its open
stubs, in a fixed order, is compared with every open stub before it; the most
similar past --duplicate-prefilter is a candidate, and the judge decides whether the
two ask the same (with --judge embedding, the cosine alone, from the duplicate
threshold). A duplicate leaves the open stubs: status `duplicate`, an edge DUPLICATES
to its twin with the verdict and reason, its flags carried by the twin."""

from __future__ import annotations

import asyncio

from dagmca.debate.dag import judge
from dagmca.debate.dag.flags import flagged_at
from dagmca.debate.events import DuplicateChecked
from dagmca.debate.state import SessionState
from dagmca.debate.state.graph_so_far import GraphSoFar
from dagmca.graph import DebateNode, EdgeRecord, EdgeType, TensionNode, TensionStatus
from dagmca.similarity.counts import EmbedPhase

Candidate = tuple[TensionNode, TensionNode, float]  # (later, earlier, cosine)
Verdicts = list[tuple[TensionNode, TensionNode, float, judge.Decision]]


async def merge(state: SessionState, debates: list[DebateNode]) -> list[TensionNode]:
    """Judge the open stubs of `debates` against the open stubs before them (`judged`),
    then apply the verdicts in order (`apply`). Returns the stubs merged."""
    async with state.revisit_lock:
        return apply(state, await judged(state, debates))


async def judged(state: SessionState, debates: list[DebateNode]) -> Verdicts:
    """The open stubs of `debates` (in their order, then by id), each against the most
    similar open stub before it: every other open stub of the session, then theirs in
    that order. The verdicts are asked together."""
    candidates = await _candidates(state, debates)
    decisions = await asyncio.gather(*(judge.duplicate(state, e, new, sim) for new, e, sim in candidates))
    return [(new, e, sim, d) for (new, e, sim), d in zip(candidates, decisions, strict=True)]


def apply(state: SessionState, verdicts: Verdicts) -> list[TensionNode]:
    """In order: a stub judged a duplicate of one still open (or of one merged into
    one still open) leaves the open stubs. Returns the stubs merged."""
    st = state
    merged: list[TensionNode] = []
    for later, earlier, sim, decision in verdicts:
        twin = _open_twin(st.graph, earlier)
        ok = decision.verdict == "duplicate" and twin is not None and later.status is TensionStatus.STUB
        reason = decision.reason
        if decision.verdict == "duplicate" and not ok:
            reason = f"{reason} (not merged: {earlier.id} left the open stubs first)"
        if ok and twin is not None:
            via = "" if twin is earlier else f" (via {earlier.id}, itself a duplicate of it)"
            _merge(st, later, twin, decision.props(), via)
            merged.append(later)
        st.handles.emit(
            DuplicateChecked(
                stub=later.id,
                question=later.question,
                twin=(twin or earlier).id,
                twin_question=(twin or earlier).question,
                merged=ok,
                similarity=round(sim, 2),
                method=decision.method.value,
                reason=reason,
                verdict=decision.verdict,
                degenerate=decision.degenerate,
            )
        )
    return merged


async def _candidates(st: SessionState, debates: list[DebateNode]) -> list[Candidate]:
    order = {d.id: i for i, d in enumerate(debates)}
    opened = st.graph.open_stubs()
    new = sorted((t for t in opened if t.debate in order), key=lambda t: (order[t.debate], t.id))
    # by id: the order they were flagged in depends on which debate ran faster
    pool = sorted((t for t in opened if t.debate not in order), key=lambda t: t.id) + new
    first = len(pool) - len(new)
    if st.handles.config.duplicate_prefilter >= 1.0 or not new or len(pool) < 2:
        return []
    sims = await st.handles.embedder.amatrix([t.question for t in pool], phase=EmbedPhase.DUPLICATES)
    cfg = st.handles.config
    floor = cfg.duplicate_threshold if cfg.judge == "embedding" else cfg.duplicate_prefilter
    out: list[Candidate] = []
    for k in range(max(first, 1), len(pool)):
        row = [round(float(s), 4) for s in sims[k, :k]]  # 4 decimals: a batch's float noise must not pick
        best = max(range(k), key=lambda j: (row[j], -j))  # of equal cosine, the earlier
        if row[best] >= floor:
            out.append((pool[k], pool[best], row[best]))
    return out


def _open_twin(graph: GraphSoFar, tension: TensionNode) -> TensionNode | None:
    """The open stub `tension` stands for: itself, or what it was merged into."""
    seen: set[str] = set()
    while tension.status is TensionStatus.DUPLICATE and tension.duplicate_of not in seen:
        seen.add(tension.id)
        tension = graph.tensions[tension.duplicate_of]
    return tension if tension.status is TensionStatus.STUB else None


def _merge(
    st: SessionState, later: TensionNode, twin: TensionNode, props: dict[str, str | float | bool], via: str
) -> None:
    later.status = TensionStatus.DUPLICATE
    later.duplicate_of = twin.id
    later.dropped_reason = f"asks what {twin.id} asks: {props['reason']}{via}"
    # the twin is flagged at every turn that raised either, as a near-restatement would be
    added = sorted(set(later.flags) - set(twin.flags))
    twin.flags = sorted([*twin.flags, *added])
    edges: list[EdgeRecord] = [st.handles.edge(later.id, twin.id, EdgeType.DUPLICATES, **props)]
    for flag in added:
        lens, turn = flag.split("@", 1)
        edges.append(flagged_at(st.handles, twin.id, turn, lens))
    st.write([later, twin], edges)
