"""Merging finished sibling branches, and the relations of those that do not merge
(DESIGN §1.6, §1.8)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import networkx as nx

from dagmca.debate.events import RelationFound, SynthesisWritten
from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta
from dagmca.models import CallPhase, DebateNode, EdgeType, Phase, SynthesisNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import RelationVerdict

AfterSynthesis = Callable[[SynthesisNode], Awaitable[None]]


def components(n: int, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components (size >= 2) of the graph on range(n) with edges `pairs`,
    each in index order, ordered by their first index."""
    g: nx.Graph = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    return sorted(sorted(c) for c in nx.connected_components(g) if len(c) > 1)


async def baseline(state: SessionState) -> float:
    """How alike two independent texts of this run are anyway: the mean pairwise
    similarity of the main debate's first-round responses (written before anyone saw
    anyone). Small models make everything alike, so a merge must beat this, not only
    the absolute threshold."""
    main = state.outcomes.get(f"{state.session_id}/main")
    texts = [t.text for t in (main.turns if main else []) if t.round == 1 and t.phase is Phase.RESPOND]
    if len(texts) < 2:
        return 0.0
    m = await state.embedder.amatrix(texts)
    pairs = [float(m[i, j]) for i in range(len(texts)) for j in range(i + 1, len(texts))]
    return round(sum(pairs) / len(pairs), 4)


async def merge(
    state: SessionState, branches: list[DebateNode], parent: DebateNode, *, then: AfterSynthesis
) -> None:
    """Pairs of branches whose resolutions converge are grouped into one Synthesis each
    (`then` runs after each is written); related pairs that do not converge get their
    relation judged."""
    st, cfg = state, state.config
    if len(branches) < 2:
        return
    sim = await st.embedder.amatrix([b.resolution for b in branches])
    base = await baseline(st)
    merge_pairs, related = [], []
    for i in range(len(branches)):
        for j in range(i + 1, len(branches)):
            s = float(sim[i, j])
            if s >= cfg.merge_threshold and s >= base + cfg.merge_margin:
                merge_pairs.append((i, j))
            elif s >= cfg.relation_threshold:
                related.append((branches[j], branches[i], s))
    verdicts = await asyncio.gather(*(_relation(st, later, earlier, parent) for later, earlier, _ in related))
    edges = []
    for (later, earlier, s), (type_, reason) in zip(related, verdicts, strict=True):
        if type_ is EdgeType.CONTRADICTS:
            st.contradictions.append((later, earlier, reason))
        if type_ is not None:
            edges.append(st.edge(later.id, earlier.id, type_, similarity=round(s, 4), reason=reason))
            st.emit(RelationFound(source=later.id, target=earlier.id, type=type_.value))
    st.write([], edges)
    for k, group in enumerate(components(len(branches), merge_pairs), start=1):
        members = [branches[i] for i in group]
        pair_sims = [float(sim[a, b]) for a in group for b in group if a < b]
        synthesis = await _synthesize(
            st, f"{parent.id}/syn{k}", members, parent, sum(pair_sims) / len(pair_sims), base
        )
        if synthesis is not None:
            await then(synthesis)


async def _relation(
    st: SessionState, later: DebateNode, earlier: DebateNode, parent: DebateNode
) -> tuple[EdgeType | None, str]:
    """Related but not merged: does the later resolution contradict or elaborate the
    earlier one? The LLM decides; without it (off, budget, failure) they elaborate."""
    cfg = st.config
    fallback = (EdgeType.ELABORATES, "similar resolutions that did not converge")
    if not cfg.classify_relations or st.llm.exhausted(reserve_calls=2):
        return fallback
    messages = tpl.relation(st.frame(parent)(), (earlier.question, earlier.resolution),
                            (later.question, later.resolution))  # fmt: skip
    meta = CallMeta(agent="merger", debate=parent.id, phase=CallPhase.RELATION)
    done = await st.ask(messages, schema=RelationVerdict, max_tokens=cfg.flag_tokens(), meta=meta)
    if done is None:
        return fallback
    verdict: RelationVerdict = done.parsed
    type_ = {"contradicts": EdgeType.CONTRADICTS, "elaborates": EdgeType.ELABORATES}.get(verdict.relation)
    return type_, verdict.reason.strip() or verdict.relation


async def _synthesize(
    st: SessionState,
    node_id: str,
    members: list[DebateNode],
    parent: DebateNode,
    similarity: float,
    baseline: float,
) -> SynthesisNode | None:
    cfg = st.config
    if st.llm.exhausted(reserve_calls=1):
        return None
    messages = tpl.synthesize(st.frame(parent)(), [(m.question, m.resolution) for m in members])
    meta = CallMeta(agent="merger", debate=parent.id, phase=CallPhase.MERGE)
    done = await st.ask(messages, max_tokens=cfg.synthesis_tokens(), meta=meta)
    if done is None:  # a skipped merge, not a lost run
        return None
    synthesis = SynthesisNode(
        id=node_id,
        session=st.session_id,
        resolution=st.clean(done.text),
        reason=f"resolution embeddings converge: mean cosine {similarity:.2f} >= {cfg.merge_threshold}, "
        f"and {similarity - baseline:+.2f} over this run's baseline {baseline:.2f} "
        f"(mean cosine between the main debate's independent first answers)",
        similarity=round(similarity, 4),
    )
    st.write([synthesis], [st.edge(m.id, synthesis.id, EdgeType.MERGES_INTO) for m in members])
    st.emit(
        SynthesisWritten(
            node=synthesis.id, members=len(members), similarity=synthesis.similarity, reason=synthesis.reason
        )
    )
    return synthesis
