"""The measures themselves, as pure functions of texts, counts and vectors, so each can
be checked on hand-made inputs with known values."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from dagmca.similarity import Embedder, jaccard
from dagmca.text import split_sentences

COLLAPSE_ABOVE = 0.8  # mean sibling similarity: perspectives washing out (the seed's red flag)
BLOAT_RATIO = 1.5  # mean answer length of the last round over the first
NOVELTY_BELOW = 0.7  # a root sentence is novel when no child sentence is this close (cosine)


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


def collapse_alarm(per_round: Sequence[float]) -> bool:
    return any(s > COLLAPSE_ABOVE for s in per_round)


def bloat_alarm(lengths: Sequence[float]) -> bool:
    """Answers grow round over round: the last round's mean length over the first's."""
    return len(lengths) >= 2 and lengths[0] > 0 and lengths[-1] / lengths[0] > BLOAT_RATIO


def sentences(text: str) -> list[str]:
    return [s for s in split_sentences(text) if len(s.split()) >= 3]


def root_novelty(root: str, children: Sequence[str], embedder: Embedder) -> float | None:
    """A similarity estimate of novelty (`similarity_novelty`): the share of the root's
    sentences whose cosine to every sentence of every child stays under NOVELTY_BELOW.
    It cannot tell a paraphrase from a new idea, nor a recombination of two children's
    points from a copy of one; the emergence ledger judges that, claim by claim."""
    mine = sentences(root)
    theirs = [s for child in children for s in sentences(child)]
    if not mine:
        return None
    if not theirs:
        return 1.0
    m = embedder.matrix(mine + theirs)
    closest = m[: len(mine), len(mine) :].max(axis=1)
    return round(float((closest < NOVELTY_BELOW).sum()) / len(mine), 4)


def specialization(counts: Mapping[str, Mapping[str, int]], categories: Sequence[str]) -> float | None:
    """S: 1 minus the normalised entropy of each agent's distribution over the tension
    categories, averaged over agents. 1: every agent raises one kind of tension only;
    0: every agent raises all kinds alike."""
    k = len(categories)
    scores = []
    for row in counts.values():
        total = sum(row.get(c, 0) for c in categories)
        if total == 0 or k < 2:
            continue
        h = -sum((n / total) * math.log(n / total) for c in categories if (n := row.get(c, 0)) > 0)
        scores.append(1.0 - h / math.log(k))
    return round(sum(scores) / len(scores), 4) if scores else None


def context_divergence(vectors: Mapping[str, np.ndarray]) -> float | None:
    """D: mean pairwise cosine distance between agents' contexts (the mean embedding of
    what each agent wrote). 0: every agent holds the same context; 1: orthogonal."""
    names = sorted(vectors)
    if len(names) < 2:
        return None
    unit = []
    for n in names:
        v = np.asarray(vectors[n], dtype=np.float64)
        norm = np.linalg.norm(v)
        unit.append(v / norm if norm else v)
    dists = [1.0 - float(unit[i] @ unit[j]) for i in range(len(unit)) for j in range(i + 1, len(unit))]
    return round(sum(dists) / len(dists), 4)


def differentiation(
    counts: Mapping[str, Mapping[str, int]], categories: Sequence[str]
) -> tuple[float, int, float] | None:
    """F: Pearson's chi-square test of independence of agent x tension category (no
    continuity correction): (chi2, degrees of freedom, p-value). A small p says which
    agent spoke changes which kind of tension is raised: the agents differ in function.
    Rows and columns that are all zero are dropped; None below a 2 x 2 table."""
    table = np.array([[row.get(c, 0) for c in categories] for row in counts.values()], dtype=np.float64)
    if table.size == 0:
        return None
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if table.shape[0] < 2 or table.shape[1] < 2:
        return None
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()  # none is 0: no empty rows
    statistic = float(((table - expected) ** 2 / expected).sum())
    dof = (table.shape[0] - 1) * (table.shape[1] - 1)
    return round(statistic, 4), dof, float(f"{chi2_sf(statistic, dof):.6g}")


def chi2_sf(x: float, dof: int) -> float:
    """P(X >= x) for X chi-square with `dof` degrees of freedom: the regularized upper
    incomplete gamma function Q(dof/2, x/2), by its series below a + 1 and its continued
    fraction above (Numerical Recipes, 6.2). scipy.stats gives the same (to 1e-9; see
    the tests) but took 0.6 s to import at the end of every run."""
    a, z = dof / 2.0, x / 2.0
    if z <= 0.0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1.0:  # P by its series, Q = 1 - P
        term = total = 1.0 / a
        n = a
        while abs(term) > abs(total) * 1e-16:
            n += 1.0
            term *= z / n
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300  # Q by its continued fraction (modified Lentz)
    b = z + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return math.exp(log_front) * h
