"""Emergence measures computed from a debate's texts (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.similarity import jaccard


def mean_sibling_similarity(groups: Sequence[Sequence[str]]) -> float | None:
    """Mean pairwise Jaccard similarity between siblings' texts, over every sibling
    group; None when no group has two members. Near 1: perspectives are washing out."""
    pairs = [
        jaccard(texts[i], texts[j])
        for texts in groups
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
    ]
    return round(sum(pairs) / len(pairs), 4) if pairs else None
