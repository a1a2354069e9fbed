"""Merging finished sibling branches, and the relations of those that do not merge
(DESIGN §1.6, §1.8): every pair the prefilter passes gets a verdict from the judge;
only `converge` merges, `contradict` and `elaborate` become relation edges, and no
relation edge is written without a verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from dagmca.debate.dag import judge
from dagmca.debate.dag.judge import Decision
from dagmca.debate.events import PairJudged, SynthesisWritten
from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta
from dagmca.models import CallPhase, DebateNode, EdgeType, SynthesisNode
from dagmca.prompts import templates as tpl

AfterSynthesis = Callable[[SynthesisNode], Awaitable[None]]
RELATIONS = {"contradict": EdgeType.CONTRADICTS, "elaborate": EdgeType.ELABORATES}


def components(n: int, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components (size >= 2) of the graph on range(n) with edges `pairs`,
    each in index order, ordered by their first index. (A union-find of a few lines:
    networkx would cost every run a quarter of a second to import.)"""
    root = list(range(n))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for a, b in pairs:
        root[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(g for g in groups.values() if len(g) > 1)


async def merge(
    state: SessionState, branches: list[DebateNode], parent: DebateNode, *, then: AfterSynthesis
) -> None:
    """Each pair of branches alike enough to be a candidate is judged; the pairs judged
    to converge are grouped (connected components) into one Synthesis each (`then`
    runs after each is written)."""
    st, cfg = state, state.config
    branches = [b for b in branches if not b.degenerate]  # a loop converges with nothing
    if len(branches) < 2:
        return
    sim = await st.embedder.amatrix([b.resolution for b in branches])
    candidates = [
        (i, j, float(sim[i, j]))
        for i in range(len(branches))
        for j in range(i + 1, len(branches))
        if float(sim[i, j]) >= cfg.pair_prefilter
    ]
    decisions = await asyncio.gather(
        *(judge.pair(st, branches[i], branches[j], parent, s) for i, j, s in candidates)
    )
    edges, converging = [], {}
    for (i, j, _), decision in zip(candidates, decisions, strict=True):
        earlier, later = branches[i], branches[j]
        st.emit(
            PairJudged(
                source=later.id,
                target=earlier.id,
                verdict=decision.verdict,
                method=decision.method.value,
                similarity=round(decision.similarity, 4),
                reason=decision.reason,
            )
        )
        if decision.verdict == "converge":
            converging[(i, j)] = decision
        elif decision.verdict in RELATIONS:
            if decision.verdict == "contradict":
                st.contradictions.append((later, earlier, decision.reason))
            edges.append(st.edge(later.id, earlier.id, RELATIONS[decision.verdict], **decision.props()))
    st.write([], edges)
    for k, group in enumerate(components(len(branches), list(converging)), start=1):
        members = [branches[i] for i in group]
        why = [(branches[i], branches[j], d) for (i, j), d in converging.items() if i in group]
        synthesis = await _synthesize(st, f"{parent.id}/syn{k}", members, parent, why)
        if synthesis is not None:
            await then(synthesis)


def _short(node: DebateNode) -> str:
    return node.id.rsplit("/", 1)[-1]


async def _synthesize(
    st: SessionState,
    node_id: str,
    members: list[DebateNode],
    parent: DebateNode,
    why: list[tuple[DebateNode, DebateNode, Decision]],
) -> SynthesisNode | None:
    cfg = st.config
    if st.llm.exhausted(reserve_calls=1):
        return None
    messages = tpl.synthesize(st.frame(parent)(), [(m.question, m.resolution) for m in members])
    meta = CallMeta(agent="merger", debate=parent.id, phase=CallPhase.MERGE)
    done = await st.ask(messages, max_tokens=cfg.synthesis_tokens(), meta=meta)
    if done is None:  # a skipped merge, not a lost run
        return None
    decisions = [d for _, _, d in why]
    if len(why) == 1:
        reason = decisions[0].reason
    else:
        reason = "; ".join(f"{_short(a)} and {_short(b)}: {d.reason}" for a, b, d in why)
    synthesis = SynthesisNode(
        id=node_id,
        session=st.session_id,
        resolution=st.clean(done.text),
        degenerate=bool(done.degenerate),
        reason=reason,
        similarity=round(sum(d.similarity for d in decisions) / len(decisions), 4),
        method=decisions[0].method,
        verdict="converge",
        shared_claim=next((d.claim for d in decisions if d.claim), ""),
    )
    st.write([synthesis], [st.edge(m.id, synthesis.id, EdgeType.MERGES_INTO) for m in members])
    st.emit(
        SynthesisWritten(
            node=synthesis.id,
            members=len(members),
            similarity=synthesis.similarity,
            reason=synthesis.reason,
            method=synthesis.method.value,
        )
    )
    return synthesis
