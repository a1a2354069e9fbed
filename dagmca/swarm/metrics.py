"""S, D and F of a swarm at one moment, with the measures the debate's metrics use:

- S, specialization: 1 minus the normalised entropy of each agent's tasks over the
  types, over the tasks since the previous snapshot (the window), averaged over agents
  that took any (0: every agent takes every type alike; 1: each takes one type only).
  It is the division of labour the router makes now, not skill (an agent's successes
  are in D and in the accuracy), and not its history (the first snapshots' exploring
  would hold a settled swarm's S down for the rest of the stream);
- D, context divergence: mean pairwise cosine distance between the agents' contexts
  (the embedding of each agent's solved examples; an empty context is left out);
- F, functional differentiation: Pearson's chi-square of agent x type over the
  window's tasks, with its degrees of freedom and p-value.

S has a floor above 0 that comes from a finite sample alone: `s_noise` is the 95th
percentile of S over shuffles of the window's types among the same agents (each
keeps its number of tasks). An S inside that floor is no specialization."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dagmca.metrics.measures import context_divergence, differentiation, specialization
from dagmca.similarity import Embedder
from dagmca.swarm.agents import Agent

SHUFFLES = 200


@dataclass(frozen=True)
class Snapshot:
    seen: int  # tasks attempted so far
    accuracy: float  # successes over tasks attempted so far
    s: float | None
    s_noise: float | None
    d: float | None
    f_chi2: float | None
    f_dof: int | None
    f_p: float | None


def window_counts(agents: Sequence[Agent], since: int) -> dict[str, dict[str, int]]:
    """Agent x type counts of the tasks attempted at or after position `since`."""
    counts: dict[str, dict[str, int]] = {}
    for agent in agents:
        row = counts.setdefault(agent.name, {})
        for example in agent.examples:
            if example.position >= since:
                row[example.task_type] = row.get(example.task_type, 0) + 1
    return counts


def noise_floor(counts: Mapping[str, Mapping[str, int]], types: Sequence[str], seed: int) -> float | None:
    """The 95th percentile of S when the attempted tasks' types are shuffled among agents."""
    labels = [t for row in counts.values() for t, n in row.items() for _ in range(n)]
    sizes = [sum(row.values()) for row in counts.values()]
    if not labels:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(SHUFFLES):
        rng.shuffle(labels)
        shuffled: dict[str, dict[str, int]] = {}
        start = 0
        for i, size in enumerate(sizes):
            row = shuffled.setdefault(str(i), {})
            for t in labels[start : start + size]:
                row[t] = row.get(t, 0) + 1
            start += size
        value = specialization(shuffled, types)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    return round(values[min(len(values) - 1, int(0.95 * len(values)))], 4)


def divergence(agents: Sequence[Agent], embedder: Embedder | None) -> float | None:
    texts = {a.name: a.context_text() for a in agents if a.solved()}
    if embedder is None or len(texts) < 2:
        return None
    names = sorted(texts)
    matrix = embedder.matrix([texts[n] for n in names])
    return context_divergence({n: np.asarray(matrix[i]) for i, n in enumerate(names)})


def snapshot(
    agents: Sequence[Agent],
    types: Sequence[str],
    seen: int,
    successes: int,
    embedder: Embedder | None,
    seed: int,
    window: int,
) -> Snapshot:
    counts = window_counts(agents, seen - window)
    f = differentiation(counts, types)
    return Snapshot(
        seen=seen,
        accuracy=round(successes / seen, 4) if seen else 0.0,
        s=specialization(counts, types),
        s_noise=noise_floor(counts, types, seed),
        d=divergence(agents, embedder),
        f_chi2=f[0] if f else None,
        f_dof=f[1] if f else None,
        f_p=f[2] if f else None,
    )
