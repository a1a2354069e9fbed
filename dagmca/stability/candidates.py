"""Which pairs of two samples' members the judge reads: the embedding prefilter of the
duplicate-question check, across sessions. For every two sessions, each member's most
similar members of the other session past the prefilter (at most `per_member` of them,
in both directions) are candidates; the rest are never a match. Similarity only picks
what is read: every match is the judge's.

Members of one session are never compared: a session's own duplicates were judged
while it ran, and a finding holds at most one member per session."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.similarity import Embedder
from dagmca.similarity.counts import EmbedPhase
from dagmca.stability.members import Member


@dataclass(frozen=True)
class Candidate:
    """Two members of two sessions, `first` of the earlier sample, with their cosine."""

    first: Member
    second: Member
    similarity: float


async def candidates(
    embedder: Embedder, by_session: Sequence[Sequence[Member]], *, prefilter: float, per_member: int
) -> list[Candidate]:
    """Every pair the judge reads, in the samples' order, then the members' order: a
    pair is read when either member is among the other's `per_member` most similar in
    its session from `prefilter` (of equal cosine at 4 decimals, the earlier member: a
    batch's float noise must not choose)."""
    flat = [m for members in by_session for m in members]
    if per_member < 1 or len({m.session for m in flat}) < 2:
        return []
    sims = await embedder.amatrix([m.text for m in flat], phase=EmbedPhase.OTHER)
    starts, at = [], 0
    for members in by_session:
        starts.append(at)
        at += len(members)
    found: list[Candidate] = []
    for i, first in enumerate(by_session):
        for j in range(i + 1, len(by_session)):
            second = by_session[j]
            block = [[round(float(sims[starts[i] + a, starts[j] + b]), 4) for b in range(len(second))]
                     for a in range(len(first))]  # fmt: skip
            chosen = set()
            for a in range(len(first)):
                chosen |= {
                    (a, b) for b in _best([block[a][b] for b in range(len(second))], prefilter, per_member)
                }
            for b in range(len(second)):
                chosen |= {
                    (a, b) for a in _best([block[a][b] for a in range(len(first))], prefilter, per_member)
                }
            found += [Candidate(first[a], second[b], block[a][b]) for a, b in sorted(chosen)]
    return found


def _best(row: list[float], prefilter: float, n: int) -> list[int]:
    passed = [k for k, s in enumerate(row) if s >= prefilter]
    return sorted(passed, key=lambda k: (-row[k], k))[:n]
