"""Merging finished sibling branches, and the relations of those that do not merge:
every pair the prefilter passes gets a verdict from the judge, and so does every pair
of a group of converging branches that the prefilter skipped; a group merges only when
every pair in it was judged `converge`, `contradict` and `elaborate` become relation
edges, and no relation edge is written without a verdict."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from dagmca.debate.dag import judge
from dagmca.debate.dag.judge import Decision
from dagmca.debate.events import PairJudged, SynthesisWritten
from dagmca.debate.state import SessionState
from dagmca.graph import CallPhase, DebateNode, EdgeType, SynthesisNode
from dagmca.llm.base import CallMeta
from dagmca.prompts import templates as tpl
from dagmca.similarity import pieces
from dagmca.similarity.counts import EmbedPhase

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


# a synthesis to write: its id, its members, the parent, the converge verdicts behind it
_Group = tuple[str, list[DebateNode], DebateNode, list[tuple[DebateNode, DebateNode, Decision]]]


@dataclass
class Judged:
    """One parent's finished branches, their candidate pairs and the verdicts, the groups
    that converge and the merger's reply for each (None: skipped)."""

    parent: DebateNode
    branches: list[DebateNode]
    candidates: list[tuple[int, int, float]]
    decisions: list[Decision]
    similarity: list[list[float]] = field(default_factory=list)  # every pair's cosine
    groups: list[_Group] = field(default_factory=list)
    replies: list[tuple[str, bool] | None] = field(default_factory=list)


Family = tuple[list[DebateNode], DebateNode]  # a parent's finished branches, and the parent


async def judged(state: SessionState, families: list[Family]) -> list[Judged]:
    """The calls of merging, writing nothing: for each parent's finished branches, every
    pair alike enough to be a candidate is judged; the pairs judged to converge are
    grouped (connected components); a pair of a group the prefilter skipped is judged
    then; a group merges only when every pair in it converges, and the merger writes
    each such group's synthesis. All the parents' judge calls are made together, then
    those of the skipped pairs, then all their syntheses. They depend on the finished
    branches alone, so they can be asked while the DAG goes on below them; `apply`
    writes what they decided."""
    st = state
    found = await asyncio.gather(*(_judge_pairs(st, branches, parent) for branches, parent in families))
    done = [j for j in found if j is not None]
    await asyncio.gather(*(_judge_skipped(st, j) for j in done))
    for j in done:
        j.groups = _groups(j)
    asked = [
        _ask_synthesis(st, members, parent, _context(j, members))
        for j in done
        for _, members, parent, _ in j.groups
    ]
    replies = iter(await asyncio.gather(*asked))
    for j in done:
        j.replies = [next(replies) for _ in j.groups]
    return done


def apply(state: SessionState, judged: list[Judged]) -> list[SynthesisNode]:
    """What the merges decided, into the graph: every parent's relations, then its
    syntheses, parent by parent, group by group, in order, so the graph does not depend
    on which call returned first. Returns the syntheses written, in that order."""
    for j in judged:
        _record(state, j)
    written = []
    for j in judged:
        for (node_id, members, _, why), reply in zip(j.groups, j.replies, strict=True):
            if reply is not None:  # None: skipped (the budget, or a failed call), not a lost run
                written.append(_write_synthesis(state, node_id, members, why, *reply))
    return written


async def _judge_pairs(state: SessionState, branches: list[DebateNode], parent: DebateNode) -> Judged | None:
    st, cfg = state, state.handles.config
    branches = [b for b in branches if not b.degenerate]  # a loop converges with nothing
    if len(branches) < 2:
        return None
    sim = await st.handles.embedder.amatrix([b.resolution for b in branches], phase=EmbedPhase.MERGING)
    candidates = [
        (i, j, float(sim[i, j]))
        for i in range(len(branches))
        for j in range(i + 1, len(branches))
        if float(sim[i, j]) >= cfg.pair_prefilter
    ]
    decisions = await asyncio.gather(
        *(judge.pair(st, branches[i], branches[j], parent, s) for i, j, s in candidates)
    )
    return Judged(parent, branches, candidates, list(decisions), sim.tolist())


async def _judge_skipped(state: SessionState, judged: Judged) -> None:
    """The pairs the prefilter skipped inside a group of converging branches, judged (in
    both orders, as every pair): a group is merged only on verdicts a judge gave, never
    because two branches each converge with a third."""
    converging = [(i, j) for (i, j, _), d in zip(judged.candidates, judged.decisions, strict=True)
                  if d.verdict == "converge"]  # fmt: skip
    asked = {(i, j) for i, j, _ in judged.candidates}
    skipped = [
        (i, j)
        for group in components(len(judged.branches), converging)
        for k, i in enumerate(group)
        for j in group[k + 1 :]
        if (i, j) not in asked
    ]
    if not skipped:
        return
    pairs = [(i, j, judged.similarity[i][j]) for i, j in skipped]
    b, parent = judged.branches, judged.parent
    decisions = await asyncio.gather(*(judge.pair(state, b[i], b[j], parent, s) for i, j, s in pairs))
    judged.candidates += pairs
    judged.decisions += decisions


def _groups(judged: Judged) -> list[_Group]:
    """The groups of one parent's branches that converge (connected components of the
    converge verdicts), each to be synthesised when every pair in it was judged to
    converge. A group holding a pair judged otherwise is not merged at all: which of its
    converge verdicts to cut is a choice no judge made, and a synthesis of a group that
    holds a contradiction would state both sides as one view. Its converge verdicts say
    so in their reason; its contradictions stay relation edges, and the final
    integration reads them with both positions."""
    branches, parent = judged.branches, judged.parent
    verdicts = list(zip(judged.candidates, judged.decisions, strict=True))
    converging = {(i, j): d for (i, j, _), d in verdicts if d.verdict == "converge"}
    apart = [(i, j, d.verdict) for (i, j, _), d in verdicts if d.verdict != "converge"]
    groups: list[_Group] = []
    for group in components(len(branches), list(converging)):
        held = [(i, j, v) for i, j, v in apart if i in group and j in group]
        if held:
            _hold(judged, group, held)
            continue
        members = [branches[i] for i in group]
        why = [(branches[i], branches[j], d) for (i, j), d in converging.items() if i in group]
        groups.append((f"{parent.id}/syn{len(groups) + 1}", members, parent, why))
    return groups


def _hold(judged: Judged, group: list[int], held: list[tuple[int, int, str]]) -> None:
    """Mark the converge verdicts of a group not merged because a pair in it was not
    judged to converge (a contradiction, or another verdict, or none in one order)."""
    b = judged.branches
    names = "; ".join(f"{_short(b[i])} and {_short(b[j])}: {v}" for i, j, v in held)
    note = f"; not merged: its group also holds branches not judged to converge ({names})"
    for k, ((i, _, _), d) in enumerate(zip(judged.candidates, judged.decisions, strict=True)):
        if d.verdict == "converge" and i in group:
            judged.decisions[k] = replace(d, reason=d.reason + note)


def _context(judged: Judged, members: list[DebateNode]) -> list[str]:
    """What the merger is told of a group beside the texts: for each pair of members,
    what the judge found (every pair of a merged group converges, each with the claim
    it named), and every contradiction judged between a member and another branch."""
    ids = {m.id for m in members}
    told = []
    found = {(judged.branches[i].id, judged.branches[j].id): d for (i, j, _), d in
             zip(judged.candidates, judged.decisions, strict=True)}  # fmt: skip
    for k, a in enumerate(members):
        for b in members[k + 1 :]:
            pair = f"the debates on '{a.question}' and '{b.question}'"
            d = found.get((a.id, b.id)) or found.get((b.id, a.id))
            assert d is not None and d.verdict == "converge", "a group merges only when every pair converges"
            shared = f", sharing: {d.claim}" if d.claim else ""
            told.append(f"The judge read {pair} as converging{shared}")
    for (i, j, _), d in zip(judged.candidates, judged.decisions, strict=True):
        a, b = judged.branches[i], judged.branches[j]
        if d.verdict == "contradict" and (a.id in ids or b.id in ids):
            pair = f"the debates on '{a.question}' and '{b.question}'"
            told.append(f"The judge found that {pair} contradict: {d.reason}")
    return told


def _record(st: SessionState, judged: Judged) -> None:
    """One parent's verdicts into the graph (relations) and the events."""
    branches = judged.branches
    edges = []
    for (i, j, _), decision in zip(judged.candidates, judged.decisions, strict=True):
        earlier, later = branches[i], branches[j]
        st.handles.emit(
            PairJudged(
                source=later.id,
                target=earlier.id,
                verdict=decision.verdict,
                method=decision.method.value,
                similarity=round(decision.similarity, 4),
                reason=decision.reason,
                degenerate=decision.degenerate,
            )
        )
        if decision.verdict in RELATIONS:
            if decision.verdict == "contradict":
                st.graph.contradictions.append((later, earlier, decision.reason))
            edges.append(
                st.handles.edge(later.id, earlier.id, RELATIONS[decision.verdict], **decision.props())
            )
    st.write([], edges)


def _short(node: DebateNode) -> str:
    return node.id.rsplit("/", 1)[-1]


async def _ask_synthesis(
    st: SessionState, members: list[DebateNode], parent: DebateNode, told: list[str]
) -> tuple[str, bool] | None:
    """The merger's text for a group, and whether it is degenerate; None when skipped."""
    if st.handles.llm.exhausted(reserve_calls=1):
        return None
    messages = tpl.synthesize(st.prompts.frame(parent)(), [(m.question, m.resolution) for m in members], told)
    meta = CallMeta(agent="merger", debate=parent.id, phase=CallPhase.MERGE)
    done = await st.ask(messages, max_tokens=st.handles.config.synthesis_tokens(), meta=meta)
    if done is None:
        return None
    return st.clean(done.text), bool(done.degenerate)


def _write_synthesis(
    st: SessionState,
    node_id: str,
    members: list[DebateNode],
    why: list[tuple[DebateNode, DebateNode, Decision]],
    text: str,
    degenerate: bool,
) -> SynthesisNode:
    decisions = [d for _, _, d in why]
    if len(why) == 1:
        reason = decisions[0].reason
    else:
        reason = "; ".join(f"{_short(a)} and {_short(b)}: {d.reason}" for a, b, d in why)
    synthesis = SynthesisNode(
        id=node_id,
        session=st.handles.session_id,
        resolution=text,
        degenerate=degenerate,
        reason=reason,
        similarity=round(sum(d.similarity for d in decisions) / len(decisions), 4),
        method=decisions[0].method,
        verdict="converge",
        shared_claim=next((d.claim for d in decisions if d.claim), ""),
    )
    st.handles.embedder.prefetch([text, *pieces(text)], soon=True)  # checked against the open stubs next
    st.write([synthesis], [st.handles.edge(m.id, synthesis.id, EdgeType.MERGES_INTO) for m in members])
    st.handles.emit(
        SynthesisWritten(
            node=synthesis.id,
            members=len(members),
            similarity=synthesis.similarity,
            reason=synthesis.reason,
            method=synthesis.method.value,
        )
    )
    return synthesis
