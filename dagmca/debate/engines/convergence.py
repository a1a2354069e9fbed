"""Convergence: did the root's output change materially between two rounds?

A whole-text similarity (Jaccard of words, or the cosine of two whole texts) cannot
tell: prose reworded round to round never reaches a high Jaccard, and the cosine of
two long texts on one subject is high whether or not a point was added, dropped or
turned around, and so is a mean over sentences, which the unchanged ones carry. So
each sentence of either output is matched to its closest sentence in the other, and
the score is the worst match: a point added leaves a sentence of the new output
unmatched, a point dropped one of the old, a reworded point is still matched. No model
call, so a round costs exactly its table's calls. The threshold it is compared with
was calibrated on a labelled set of round pairs (scripts/calibrate_convergence.py).
A sentence turned into its opposite in the same words is the one change an embedding
does not see; in a question session a changed answer tally counts as a change.
"""

from __future__ import annotations

import re

import numpy as np

from dagmca.similarity import Embedder
from dagmca.similarity.counts import EmbedPhase

_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_LEAD = re.compile(r"^[\s\-*\u2022#>]*(?:\d+[.)]\s+)?")
MIN_WORDS = 3  # a label ("Disagreements:"), a bullet's "none": no point of its own


def sentences(text: str) -> list[str]:
    """The points of an output: its sentences and list items, labels left out."""
    out = []
    for piece in _SPLIT.split(text):
        piece = _LEAD.sub("", piece).strip()
        if len(piece.split()) >= MIN_WORDS:
            out.append(piece)
    return out


def alignment(sims: np.ndarray, before: int) -> float:
    """The score from the cosine matrix of `before` sentences followed by the after
    ones: the worst best match of a sentence of either output in the other."""
    cross = sims[:before, before:]
    return float(min(cross.max(axis=1).min(), cross.max(axis=0).min()))


def score(matrix: np.ndarray, a: list[str], b: list[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return round(max(0.0, min(1.0, alignment(matrix, len(a)))), 4)


async def no_change(
    embedder: Embedder, before: str, after: str, *, phase: EmbedPhase = EmbedPhase.CONVERGENCE
) -> float:
    """1.0: the same points in both; lower as points are added, dropped or changed."""
    a, b = sentences(before), sentences(after)
    if not a or not b:
        return score(np.zeros((0, 0)), a, b)
    return score(await embedder.amatrix([*a, *b], phase=phase), a, b)


def no_change_now(embedder: Embedder, before: str, after: str) -> float:
    """`no_change` off the event loop (the calibration script's)."""
    a, b = sentences(before), sentences(after)
    if not a or not b:
        return score(np.zeros((0, 0)), a, b)
    return score(embedder.matrix([*a, *b]), a, b)
