"""The ledger's prefilter: which earlier texts the judge reads for a claim. It only picks
candidates, tuned for recall; the judge decides.

A claim is one sentence and a turn makes many points, so a claim is compared with each
sentence of a text and with each piece of it (a claim that joins two of its sentences
may be closest to the piece that holds both), and the text's similarity is the
closest. Texts in the same words (a resolution and the turn that gave it) are read
once, as one candidate."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagmca.debate.ledger.texts import Said
from dagmca.similarity import Embedder, pieces
from dagmca.similarity.counts import EmbedPhase

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_BULLET = " \t-*•"
MIN_WORDS = 3  # a shorter line (a heading, a list's lead-in) says too little to compare


@dataclass(frozen=True)
class Candidate:
    """One text (said as one or more nodes in the same words, earliest first) and its
    similarity to the claim."""

    texts: tuple[Said, ...]
    similarity: float

    @property
    def first(self) -> Said:
        return self.texts[0]


def units(text: str) -> list[str]:
    """What a claim is compared with: the text's sentences and list items, and its pieces."""
    found = [s.strip(_BULLET) for s in _SENTENCE.split(text)]
    out = [s for s in found if len(s.split()) >= MIN_WORDS]
    return list(dict.fromkeys([*out, *pieces(text)]))


def compared(pool: Sequence[Said]) -> list[str]:
    """What `candidates` compares claims with: each distinct text's units."""
    return [u for text in dict.fromkeys(s.text.strip() for s in pool) for u in units(text)]


async def candidates(
    embedder: Embedder, claims: Sequence[str], pool: Sequence[Said], threshold: float, cap: int
) -> list[list[Candidate]]:
    """For each claim, the texts of `pool` whose closest sentence or piece reaches
    `threshold`: at most `cap`, the most similar (of equal similarity at 4 decimals, the
    earlier said), listed in the order they were said."""
    groups: dict[str, list[Said]] = {}
    for s in pool:
        groups.setdefault(s.text.strip(), []).append(s)
    texts = list(groups)
    if not claims or not texts:
        return [[] for _ in claims]
    parts = [units(t) for t in texts]
    flat = [u for p in parts for u in p]
    vecs = await embedder.aembed([*claims, *flat], phase=EmbedPhase.LEDGER)
    sims = np.clip(vecs[: len(claims)] @ vecs[len(claims) :].T, -1.0, 1.0)
    ends = np.cumsum([len(p) for p in parts])
    starts = ends - np.array([len(p) for p in parts])
    best = np.stack([sims[:, a:b].max(axis=1) for a, b in zip(starts, ends, strict=True)], axis=1)
    out: list[list[Candidate]] = []
    for row in best:
        passed = [j for j in range(len(texts)) if row[j] >= threshold]
        kept = sorted(passed, key=lambda j: (-round(float(row[j]), 4), j))[:cap]
        out.append([Candidate(tuple(groups[texts[j]]), round(float(row[j]), 4)) for j in sorted(kept)])
    return out
