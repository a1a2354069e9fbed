"""The emergence ledger over a session: each traced text (the final answer; with
--ledger all also every synthesis and debate resolution) split into claims, each claim's
candidate sources picked by the prefilter among the passage and the texts said before
it, judged and given its origin (lineage.py), and each written as soon as it is
decided, with its origin and the edges to where it came from.

The calls go through the session's client: they are budgeted, accounted to the judge
role and cached, so a resumed run replays them. What is already written is not asked
again: a claim is keyed by its text's id, the text's hash and its place in the text."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dagmca.debate.ledger.claims import split
from dagmca.debate.ledger.lineage import claim_node, lineage, sha
from dagmca.debate.ledger.prefilter import Candidate, candidates, compared
from dagmca.debate.ledger.texts import MIN_WORDS, Said, before, said
from dagmca.debate.ledger.verdicts import Verdict
from dagmca.debate.state import SessionState
from dagmca.graph import (
    ClaimNode,
    DebateNode,
    EdgeRecord,
    EdgeType,
    GraphNode,
    NodeKind,
    node_from_record,
)
from dagmca.prompts.templates import Frame
from dagmca.similarity.counts import EmbedPhase


@dataclass
class LedgerResult:
    texts: int = 0  # texts traced
    claims: int = 0  # claims written by this run
    kept: int = 0  # claims written by an earlier run, not asked again
    untraced: int = 0  # claims (or texts, unsplit) the budget or a failed call left untraced
    written: list[ClaimNode] = field(default_factory=list)


def chosen(traceable: Sequence[Said], mode: str) -> list[Said]:
    """The texts --ledger `mode` traces."""
    if mode == "off":
        return []
    return [t for t in traceable if mode == "all" or t.kind is NodeKind.FINAL]


async def trace(state: SessionState) -> LedgerResult:
    """Trace the session's texts that --ledger asks for, from the graph as stored."""
    result = LedgerResult()
    records = await state.handles.store.aread(lambda s: s.nodes(state.handles.session_id))
    nodes = [node_from_record(r) for r in records]
    merges = await state.handles.store.aread(
        lambda s: s.edges(state.handles.session_id, EdgeType.MERGES_INTO)
    )
    merged: dict[str, list[str]] = {}
    for e in merges:
        merged.setdefault(e.target, []).append(e.source)
    pool, traceable = said(nodes, merged)
    targets = chosen(traceable, state.handles.config.ledger_mode())
    if not targets:
        return result
    earlier = [n for n in nodes if isinstance(n, ClaimNode)]
    frame = frame_of(state, nodes)
    passage = passage_source(state)
    await asyncio.gather(
        *(_trace(state, frame, t, before(t, pool), passage, earlier, result) for t in targets)
    )
    return result


def passage_source(state: SessionState) -> Said | None:
    """The passage as a source: said before everything, its node the session's (none
    for a question asked without a passage)."""
    if len(state.passage.split()) < MIN_WORDS:
        return None
    return Said(state.handles.session_id, NodeKind.SESSION, state.passage, -1, "the passage")


NEAREST = 6  # the passage's sentences given to the judge for a claim, when it reads a map
_SENTENCE = re.compile(r"(?<=[.!?…])\s+")


def passage_sentences(passage: Said) -> list[str]:
    return [s for s in _SENTENCE.split(" ".join(passage.text.split())) if len(s.split()) >= MIN_WORDS]


def compared_with(state: SessionState, sources: Sequence[Said], passage: Said | None) -> list[str]:
    """What `sources_of` compares a text's claims with: the sources' units, and the
    passage's (its sentences, when its prompts carry a map)."""
    if passage is None:
        return compared(sources)
    sections = state.prompts.passage_mode == "sections"
    return [*compared(sources), *(passage_sentences(passage) if sections else compared([passage]))]


async def nearest(state: SessionState, claims: Sequence[str], passage: Said) -> list[list[Candidate]]:
    """For each claim, the passage's NEAREST sentences to it (by embedding; the judge
    decides), word for word and in the passage's order, as text 0: what the judge reads
    of the passage is what its quote is checked against."""
    sentences = passage_sentences(passage)
    if not claims or not sentences:
        return [[] for _ in claims]
    vecs = await state.handles.embedder.aembed([*claims, *sentences], phase=EmbedPhase.LEDGER)
    sims = np.clip(vecs[: len(claims)] @ vecs[len(claims) :].T, -1.0, 1.0)
    out = []
    for row in sims:
        picked = sorted(sorted(range(len(sentences)), key=lambda j: (-round(float(row[j]), 4), j))[:NEAREST])
        text = "\n".join(sentences[j] for j in picked)
        label = "the passage's sentences nearest the claim"
        excerpt = replace(passage, text=text, label=label, excerpt=True)
        out.append([Candidate((excerpt,), round(float(max(row[j] for j in picked)), 4))])
    return out


async def sources_of(
    state: SessionState, claims: Sequence[str], sources: Sequence[Said], passage: Said | None
) -> tuple[list[list[Candidate]], list[list[Candidate]]]:
    """For each claim, the candidate texts the prefilter picks among `sources`, and the
    passage as a candidate: the judge reads it for those it passes, and the entailment
    check always (it is at the top of every prompt; a long passage's prompts carry its
    map, so text 0 is then its sentences nearest the claim, quoted)."""
    cfg = state.handles.config
    found = await candidates(
        state.handles.embedder, claims, sources, cfg.ledger_prefilter, cfg.ledger_candidates
    )
    if passage is not None and state.prompts.passage_mode == "sections":
        near = await nearest(state, claims, passage)
    else:
        near = await candidates(state.handles.embedder, claims, [passage] if passage else [], -1.0, 1)
    return found, near


def frame_of(state: SessionState, nodes: Sequence[GraphNode]) -> Frame:
    """The main debate's frame for every ledger call: one prefix, cached by the server."""
    main = state.graph.debates.get(f"{state.handles.session_id}/main")
    if main is None:
        main = next(n for n in nodes if isinstance(n, DebateNode) and n.id.endswith("/main"))
    return state.prompts.frame(main)()


async def _trace(
    state: SessionState,
    frame: Frame,
    target: Said,
    sources: list[Said],
    passage: Said | None,
    earlier: Sequence[ClaimNode],
    result: LedgerResult,
) -> None:
    digest = sha(target.text)
    of_text = [c for c in earlier if c.stated_in == target.node]
    mine = {c.number: c for c in of_text if c.source_sha256 == digest}
    result.texts += 1
    stale = [c for c in of_text if c.source_sha256 != digest and not c.superseded]
    for c in stale:  # the claims of the text as it was before a revisit changed it
        c.superseded = True
    if stale:
        state.write(stale)
    if mine and len(mine) >= next(iter(mine.values())).of:
        result.kept += len(mine)
        return
    # what the claims are compared with, embedded while the call splits them out
    state.handles.embedder.prefetch(compared_with(state, sources, passage))
    claims = await split(state, frame, target)
    if claims is None:
        result.untraced += 1
        return
    found, near = await sources_of(state, claims, sources, passage)

    async def one(number: int, text: str, picked: list[Candidate], close: list[Candidate]) -> None:
        if number in mine:
            result.kept += 1
            return
        traced = await lineage(state, frame, text, picked, close[0] if close else None, target.node)
        if traced is None:
            result.untraced += 1
            return
        node = claim_node(state, target, digest, number, len(claims), text, traced)
        state.write([node], _edges(state, node, traced.verdicts))
        result.claims += 1
        result.written.append(node)

    await asyncio.gather(
        *(one(k, c, p, n) for k, (c, p, n) in enumerate(zip(claims, found, near, strict=True), start=1))
    )


def _edges(state: SessionState, claim: ClaimNode, verdicts: list[Verdict]) -> list[EdgeRecord]:
    edges = [state.handles.edge(claim.id, claim.stated_in, EdgeType.STATED_IN)]
    if claim.first_stated_at:
        edges.append(state.handles.edge(claim.id, claim.first_stated_at, EdgeType.FIRST_STATED_AT))
    for v in verdicts:
        if not v.derives:
            continue
        for s in v.candidate.texts:
            edges.append(
                state.handles.edge(
                    claim.id,
                    s.node,
                    EdgeType.DERIVES_FROM,
                    verdict=v.verdict.value,
                    sentence=v.sentence,
                    reason=v.reason,
                    similarity=v.candidate.similarity,
                    method=v.method.value,
                )
            )
    return edges
