"""Selection: which tensions of a node become branches. Pure functions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dagmca.graph import TensionCategory, TensionNode

# Categories likely to open further questions when explored.
DEEP_WEIGHT = {
    TensionCategory.ASSUMPTION: 1.0,
    TensionCategory.CONTRADICTION: 0.9,
    TensionCategory.GAP: 0.7,
    TensionCategory.OPEN_QUESTION: 0.6,
    TensionCategory.META: 0.4,
}


def _by_urgency(tensions: Sequence[TensionNode]) -> list[TensionNode]:
    return sorted(tensions, key=lambda t: (-t.urgency, t.id))


def select_urgent(tensions: Sequence[TensionNode], k: int) -> list[TensionNode]:
    return _by_urgency(tensions)[:k]


def select_diverse(tensions: Sequence[TensionNode], k: int, similarity: np.ndarray) -> list[TensionNode]:
    """Greedy max-min distance between question embeddings, starting from the most
    urgent; ties broken by urgency. `similarity[i, j]` is the cosine of i and j."""
    if k <= 0 or not tensions:
        return []
    order = sorted(range(len(tensions)), key=lambda i: (-tensions[i].urgency, tensions[i].id))
    chosen = [order[0]]
    while len(chosen) < min(k, len(tensions)):
        best, best_key = None, None
        for i in order:
            if i in chosen:
                continue
            distance = min(1.0 - float(similarity[i, j]) for j in chosen)
            key = (round(distance, 6), tensions[i].urgency)
            if best_key is None or key > best_key:
                best, best_key = i, key
        assert best is not None
        chosen.append(best)
    return [tensions[i] for i in chosen]


def select_deep(tensions: Sequence[TensionNode], k: int) -> list[TensionNode]:
    return sorted(tensions, key=lambda t: (-DEEP_WEIGHT[t.category] * t.urgency, t.id))[:k]


def select_meta(tensions: Sequence[TensionNode], k: int) -> list[TensionNode]:
    return sorted(tensions, key=lambda t: (t.category is not TensionCategory.META, -t.urgency, t.id))[:k]


def select(
    strategy: str, tensions: Sequence[TensionNode], k: int, similarity: np.ndarray | None = None
) -> list[TensionNode]:
    if strategy == "diverse":
        if similarity is None:
            raise ValueError("the diverse strategy needs the similarity matrix")
        return select_diverse(tensions, k, similarity)
    if strategy == "urgent":
        return select_urgent(tensions, k)
    if strategy == "deep":
        return select_deep(tensions, k)
    if strategy == "meta":
        return select_meta(tensions, k)
    raise ValueError(f"unknown strategy {strategy!r}")
