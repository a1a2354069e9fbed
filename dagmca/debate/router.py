"""Agents as contexts on one shared model: which agents staff a branch.

The pool is the perspectives (`--perspectives`): each is an agent that carries its
history from debate to debate. The router picks a branch's specialists by the
branch's tension category, from each agent's record in that category:

- fixed: the deterministic assignment, leaf n gets perspective (n-1) % pool (no routing);
- affinity: sampled without replacement, weights softmax(success rate / temperature);
- random: sampled uniformly;
- round-robin: the next ones in pool order, cycling;
- greedy: the best success rates (ties: pool order);
- ucb: agents never tried in the category first (pool order), then UCB1.

A success rate is Laplace-smoothed, (successes + 1) / (trials + 2), so an agent with
no record starts at 1/2. Draws use a random generator seeded by the session seed and
the branch id, so a run (and its resume) routes the same way.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from dagmca.config.groups import ROUTER_TEMPERATURE
from dagmca.graph.store_nodes import TrackRecord


@dataclass
class Router:
    kind: str
    pool: Sequence[str]
    seed: int = 0
    temperature: float = ROUTER_TEMPERATURE
    # category -> agent -> record
    history: dict[str, dict[str, TrackRecord]] = field(default_factory=lambda: defaultdict(dict))
    _next: int = 0  # round-robin position

    def record(self, category: str, agent: str) -> TrackRecord:
        """`agent`'s record in `category` (an empty one, kept, when it has none)."""
        records = self.history[category]
        found = records.get(agent)
        if found is None:
            found = records[agent] = TrackRecord()
        return found

    def update(self, category: str, agent: str, success: bool) -> None:
        r = self.record(category, agent)
        r.trials += 1
        r.successes += int(success)

    def choose(self, category: str, k: int, key: str) -> list[str]:
        """k agents (k may exceed the pool: then the pool repeats, as in the fixed
        assignment) for a branch on a tension of `category`; `key` seeds the draw."""
        pool = list(self.pool)
        picks: list[str] = []
        while len(picks) < k:
            picks += self._choose(category, min(k - len(picks), len(pool)), f"{key}/{len(picks)}")
        return picks

    def _choose(self, category: str, k: int, key: str) -> list[str]:
        pool = list(self.pool)
        rng = random.Random(f"{self.seed}:{key}")
        rates = {a: self.record(category, a).rate for a in pool}
        if self.kind == "fixed":
            return pool[:k]
        if self.kind == "random":
            return rng.sample(pool, k)
        if self.kind == "round-robin":
            picks = [pool[(self._next + i) % len(pool)] for i in range(k)]
            self._next = (self._next + k) % len(pool)
            return picks
        if self.kind == "greedy":
            return sorted(pool, key=lambda a: (-rates[a], pool.index(a)))[:k]
        if self.kind == "ucb":
            untried = [a for a in pool if self.record(category, a).trials == 0]
            total = sum(self.record(category, a).trials for a in pool)

            def bound(a: str) -> float:
                n = self.record(category, a).trials
                return rates[a] + math.sqrt(2 * math.log(max(total, 1)) / n)

            tried = sorted((a for a in pool if a not in untried), key=lambda a: (-bound(a), pool.index(a)))
            return (untried + tried)[:k]
        if self.kind == "affinity":
            drawn: list[str] = []
            left = list(pool)
            for _ in range(k):
                top = max(rates[a] for a in left)
                weights = [math.exp((rates[a] - top) / self.temperature) for a in left]
                choice = rng.choices(left, weights=weights)[0]
                drawn.append(choice)
                left.remove(choice)
            return drawn
        raise ValueError(f"unknown router {self.kind!r}")
