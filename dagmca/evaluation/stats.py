"""The statistics of an evaluation, as pure functions: nothing here reads a store or
calls a model, so each is tested on values worked out by hand.

Comparisons are paired by task: two arms answered the same questions, so the test is
on the tasks where they differ (exact McNemar, which is the sign test on those), and
intervals resample tasks, never single answers, because the answers to one task are
not independent of each other."""

from __future__ import annotations

import functools
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
    McNemar test for paired right/wrong, and the sign test for judged pairs. Under the
    null each pair is a fair coin, so the p-value is the chance of a split at least as
    uneven either way: twice the smaller tail of binomial(n, 1/2), at most 1, summed in
    exact integers. scipy's binomtest gives the same (see the tests); scipy itself, for
    this sum alone, was over a third of the light install's size."""
    return _sign_p(min(wins, losses), wins + losses)


def sign_tests(wins: Sequence[int], losses: Sequence[int]) -> list[float]:
    """`sign_test` of many (wins, losses) at once: a power simulation asks thousands,
    most of them the same few splits, so each distinct split is summed once."""
    return [_sign_p(min(int(w), int(lo)), int(w) + int(lo)) for w, lo in zip(wins, losses, strict=True)]


@functools.cache
def _sign_p(smaller: int, n: int) -> float:
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(smaller + 1))
    return min(1.0, 2 * tail / (1 << n))


def student_t_quantile(level: float, dof: int) -> float:
    """The t for which P(|T| <= t) = `level`, T Student's t with `dof` (an integer)
    degrees of freedom: bisection on the closed form of that probability for integer
    degrees (Abramowitz and Stegun 26.7.3 and 26.7.4). scipy.stats gives the same (see
    the tests), but it is no longer in the light install, for this one quantile."""
    if not 0.0 < level < 1.0 or dof < 1:
        raise ValueError(f"a two-sided level in (0, 1) and dof >= 1, not {level}, {dof}")
    lo, hi = 0.0, 1.0
    while _t_two_sided(hi, dof) < level:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if _t_two_sided(mid, dof) < level:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2.0


def _t_two_sided(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's t with integer `dof`, by its finite series in cos(theta)."""
    theta = math.atan(t / math.sqrt(dof))
    c2 = math.cos(theta) ** 2
    if dof % 2 == 0:
        term = total = 1.0
        for k in range(2, dof, 2):  # (1*3*...*(k-1)) / (2*4*...*k) cos^k
            term *= c2 * (k - 1) / k
            total += term
        return math.sin(theta) * total
    if dof == 1:
        return 2.0 * theta / math.pi
    term = total = 1.0
    for k in range(3, dof, 2):  # (2*4*...*(k-1)) / (3*5*...*k) cos^(k-1)
        term *= c2 * (k - 1) / k
        total += term
    return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


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
    shares = [(o.wins + 0.5 * o.ties, o.n) for o in outcomes]
    return bootstrap_ratio(shares, resamples=resamples, seed=seed, level=level, inflate=False)


def bootstrap_ratio(
    groups: Sequence[tuple[float, float]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    inflate: bool = True,
    bounded: bool = True,
) -> tuple[float, float]:
    """A percentile bootstrap interval of sum(k) / sum(n) over groups (tasks) given as
    (k, n), resampling the groups with replacement; seeded. `inflate` widens the
    resampled spread around the estimate by sqrt(g / (g - 1)) for g groups: the
    bootstrap's variance of a mean is the sample's, biased low by (g - 1) / g, which
    undercovers on the few tasks an eval has. `bounded`: a share, kept in [0, 1] (a
    mean cost is not). (0, 1) with no group."""
    import numpy as np  # here: numpy is a noticeable import for the CLI's other commands

    kept = [(k, n) for k, n in groups if n > 0]
    if not kept:
        return 0.0, 1.0
    ks = np.array([k for k, _ in kept], dtype=float)
    ns = np.array([n for _, n in kept], dtype=float)
    g = len(kept)
    picks = np.random.default_rng(seed).integers(0, g, size=(resamples, g))
    ratios = ks[picks].sum(axis=1) / ns[picks].sum(axis=1)
    centre = float(ks.sum() / ns.sum())
    if inflate and g > 1:
        ratios = centre + (ratios - centre) * math.sqrt(g / (g - 1))
    tail = (1 - level) / 2
    lo, hi = (float(x) for x in np.quantile(ratios, [tail, 1 - tail]))
    return (max(0.0, lo), min(1.0, hi)) if bounded else (max(0.0, lo), hi)


def task_interval(
    groups: Sequence[tuple[float, float]], *, seed: int = 0, level: float = 0.95
) -> tuple[float, float, bool]:
    """The interval of a pooled rate over tasks: the bootstrap over tasks, and below
    `FEW_TASKS` tasks the wider of that and Wilson's over the tasks' own rates (a
    percentile bootstrap collapses there: 5 wins of 5 resample to 1.0 every time), and
    so when every task scored alike, whatever their number.
    The flag says the interval rests on few tasks."""
    kept = [(k, n) for k, n in groups if n > 0]
    lo, hi = bootstrap_ratio(kept, seed=seed, level=level)
    few = len(kept) < FEW_TASKS
    # every task alike (all right, say): the resamples cannot vary, and [1, 1] would
    # claim a certainty no number of tasks gives
    flat = len({k / n for k, n in kept}) == 1
    if (few or flat) and kept:
        w_lo, w_hi = wilson(sum(k / n for k, n in kept), len(kept))
        lo, hi = min(lo, w_lo), max(hi, w_hi)
    return lo, hi, few


FEW_TASKS = 10


EXACT_SIGN_FLIPS = 500  # tasks (of nonzero d_t) up to which the sign-flip test counts every pattern


def sign_flip_test(scores: Sequence[float], resolution: int = 60) -> float:
    """Two-sided p-value of a paired sign-flip permutation test on per-task scores
    (d_t, each in [-1, 1]): under no difference each task's score is as likely negated,
    so the p-value is the share of the 2^T sign patterns whose sum is at least as far
    from 0 as the one seen. Exact by counting sums (the scores are fractions of the
    repeats, put on a grid of `resolution` steps, which holds every d_t of up to 6
    repeats exactly) up to `EXACT_SIGN_FLIPS` tasks; above that, where counting grows
    slow, the normal approximation of the sum (mean 0, variance the sum of the squared
    steps, with a continuity correction), which is close there. Tasks scored 0 do not
    move the sum and drop out. With one repeat each d_t is -1, 0 or 1 and this is the
    sign test."""
    steps = [round(abs(d) * resolution) for d in scores]
    steps = [s for s in steps if s > 0]
    if not steps:
        return 1.0
    seen = abs(sum(round(d * resolution) for d in scores))
    if len(steps) > EXACT_SIGN_FLIPS:
        return _normal_sign_flip(steps, seen)
    counts: dict[int, int] = {0: 1}
    for step in steps:
        grown: dict[int, int] = {}
        for total, ways in counts.items():
            for moved in (total + step, total - step):
                grown[moved] = grown.get(moved, 0) + ways
        counts = grown
    extreme = sum(ways for total, ways in counts.items() if abs(total) >= seen)
    # integers divided as integers: 2^T overflows a float from 1024 tasks on
    return min(1.0, extreme / (1 << len(steps)))


def _normal_sign_flip(steps: Sequence[int], seen: int) -> float:
    """P(|S| >= seen) for S the sum of +-step, from its normal approximation: the sums
    one sign pattern apart differ by at least 2 grid units, so 1 is the correction."""
    sd = math.sqrt(sum(s * s for s in steps))
    z = max(0.0, seen - 1) / sd
    return min(1.0, math.erfc(z / math.sqrt(2)))


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


def bootstrap_difference(
    groups: Sequence[tuple[float, float, float, float]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """A percentile bootstrap interval of sum(a) / sum(n) - sum(b) / sum(m) over groups
    (tasks) given as (a, n, b, m), the groups resampled with replacement: paired, a
    task's two shares drawn together, so what they share (the task's difficulty) does
    not widen it. Widened around the estimate by sqrt(g / (g - 1)) for g groups, as
    `bootstrap_ratio` is; kept in [-1, 1]. (-1, 1) with no group."""
    import numpy as np  # here: numpy is a noticeable import for the CLI's other commands

    kept = [g for g in groups if g[1] > 0 and g[3] > 0]
    if not kept:
        return -1.0, 1.0
    values = np.array(kept, dtype=float)
    g = len(kept)
    picks = np.random.default_rng(seed).integers(0, g, size=(resamples, g))
    sums = values[picks].sum(axis=1)  # (resamples, 4)
    diffs = sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3]
    total = values.sum(axis=0)
    centre = float(total[0] / total[1] - total[2] / total[3])
    if g > 1:
        diffs = centre + (diffs - centre) * math.sqrt(g / (g - 1))
    tail = (1 - level) / 2
    lo, hi = (float(x) for x in np.quantile(diffs, [tail, 1 - tail]))
    return max(-1.0, lo), min(1.0, hi)


def difference_interval(
    groups: Sequence[tuple[float, float, float, float]], *, seed: int = 0, level: float = 0.95
) -> tuple[float, float, bool]:
    """The interval of one pooled share minus another, over tasks given as (a, n, b, m):
    the paired bootstrap over tasks, and below `FEW_TASKS` tasks (or when every task
    gives the same difference, which the resamples cannot vary) the wider of that and
    Newcombe's hybrid score interval (Newcombe 1998, method 10) made of each share's
    Wilson interval over the tasks' own shares, as `task_interval` widens a rate. The
    flag says the interval rests on few tasks."""
    kept = [g for g in groups if g[1] > 0 and g[3] > 0]
    lo, hi = bootstrap_difference(kept, seed=seed, level=level)
    few = len(kept) < FEW_TASKS
    flat = len({a / n - b / m for a, n, b, m in kept}) == 1
    if (few or flat) and kept:
        t = len(kept)
        mine, theirs = sum(a / n for a, n, _, _ in kept), sum(b / m for _, _, b, m in kept)
        p, q = mine / t, theirs / t
        (p_lo, p_hi), (q_lo, q_hi) = wilson(mine, t), wilson(theirs, t)
        lo = min(lo, p - q - math.sqrt((p - p_lo) ** 2 + (q_hi - q) ** 2))
        hi = max(hi, p - q + math.sqrt((p_hi - p) ** 2 + (q - q_lo) ** 2))
    return max(-1.0, lo), min(1.0, hi), few


def per_dollar(quality: float | None, cost_usd: float) -> float | None:
    """Quality (accuracy, or a win rate) per dollar spent; None when nothing was spent
    (a local model) or there is no quality to divide."""
    if quality is None or cost_usd <= 0:
        return None
    return quality / cost_usd
