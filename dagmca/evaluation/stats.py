"""The statistics of an evaluation, as pure functions: nothing here reads a store or
calls a model, so each is tested on values worked out by hand.

Comparisons are paired by task: two arms answered the same questions, so the test is
on the tasks where they differ (exact McNemar, which is the sign test on those), and
intervals resample tasks, never single answers, because the answers to one task are
not independent of each other."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


def wilson(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: unlike the normal interval it stays
    inside [0, 1] and is not empty at 0 or n successes. (0, 1) with no trials.
    `successes` may be fractional (a tie counted as half a win)."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    # at 0 or n successes the bound is exactly 0 or 1; rounding would leave a speck
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return lo, hi


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact p-value of `wins` against `losses`, ties set aside: the exact
    McNemar test for paired right/wrong, and the sign test for judged pairs."""
    n = wins + losses
    if n == 0:
        return 1.0
    from scipy.stats import binomtest  # here: scipy costs a noticeable import

    return float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the given order: each comparison's p-value
    corrected for every comparison of the eval, monotone in the sorted order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Outcome:
    """One paired comparison on one task (over its repeats): wins, losses and ties of
    the arm against the baseline."""

    task: str
    wins: int
    losses: int
    ties: int

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties


def win_rate(outcomes: Sequence[Outcome]) -> float:
    """Wins plus half the ties, over all: 0.5 is no difference, so an arm against
    itself sits at 0.5 whatever its tie rate."""
    n = sum(o.n for o in outcomes)
    if n == 0:
        return 0.5
    return (sum(o.wins for o in outcomes) + 0.5 * sum(o.ties for o in outcomes)) / n


def bootstrap_win_rate(
    outcomes: Sequence[Outcome], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """A percentile bootstrap interval of `win_rate`, resampling tasks with
    replacement; seeded, so a report is the same each time it is built."""
    if not outcomes:
        return 0.0, 1.0
    rng = random.Random(seed)
    k = len(outcomes)
    rates = sorted(win_rate([outcomes[rng.randrange(k)] for _ in range(k)]) for _ in range(resamples))
    tail = (1 - level) / 2
    lo = rates[min(resamples - 1, math.floor(tail * resamples))]
    hi = rates[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return lo, hi


def bootstrap_share(
    counts: Sequence[tuple[int, int]], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """A percentile bootstrap interval of a pooled share, sum(k) / sum(n) over groups
    given as (k, n) (a task's claims of one origin, and all its claims), resampling the
    groups with replacement; seeded. (0, 1) when there is nothing to share."""
    groups = [(k, n) for k, n in counts if n > 0]
    if not groups:
        return 0.0, 1.0
    rng = random.Random(seed)
    size = len(groups)
    shares = []
    for _ in range(resamples):
        drawn = [groups[rng.randrange(size)] for _ in range(size)]
        shares.append(sum(k for k, _ in drawn) / sum(n for _, n in drawn))
    shares.sort()
    tail = (1 - level) / 2
    lo = shares[min(resamples - 1, math.floor(tail * resamples))]
    hi = shares[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return lo, hi


def per_dollar(quality: float | None, cost_usd: float) -> float | None:
    """Quality (accuracy, or a win rate) per dollar spent; None when nothing was spent
    (a local model) or there is no quality to divide."""
    if quality is None or cost_usd <= 0:
        return None
    return quality / cost_usd
