"""Power: the smallest difference a comparison can find, before money is spent and in
every report, by simulating the test the report runs.

A simulated eval draws, for each task and repeat, the pair's outcome (the arm right and
the baseline wrong, the reverse, or neither: a win, a loss, a tie) from the task's
discordance (the chance the two disagree) and the effect; scores each task d_t over its
repeats; takes the exact sign-flip test over the tasks (`stats.sign_flip_test`); and
corrects it by Holm among the planned comparisons, the others drawn with no effect. The
power at an effect is the share of simulated evals in which the comparison comes out
under 0.05; the minimum detectable effect (MDE) is the smallest effect with 80% power.

Effects are in the report's units: accuracy points for an accuracy comparison (the
arm's accuracy less the baseline's), win-rate points above 0.5 for a judged one. The
discordance comes from the eval itself where it has run (each task's own, resampled),
from a pilot (`--pilot`), or else from an assumption, stated with every figure it gives:
half the answers right and the arms disagreeing on ACCURACY_DISCORDANCE of the tasks, a
judge deciding JUDGED_DISCORDANCE of the pairs. Seeded: one plan gives one figure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from dagmca.evaluation.stats import EXACT_SIGN_FLIPS, holm, sign_flip_test, sign_tests
from dagmca.graph.schema import Strict

Kind = Literal["accuracy", "judged"]
POWER = 0.80
ALPHA = 0.05
SIMULATIONS = 400
DEFAULT_EFFECT = 0.10
MAX_TASKS = 5000  # beyond this many tasks, "more than" is the answer
# the assumption without data: two arms of one model disagree on 40% of tasks scored
# right/wrong (half the answers right, each arm's independent of the other's, would give
# 50%; answers of one model agree more than that); a judge decides 60% of pairs
ACCURACY_DISCORDANCE = 0.40
JUDGED_DISCORDANCE = 0.60
ASSUMED = {"accuracy": ACCURACY_DISCORDANCE, "judged": JUDGED_DISCORDANCE}


class PowerRow(Strict):
    """What one kind of comparison can find at the planned size: its MDE at 80% power
    (Holm over `comparisons`), and the tasks an effect of `effect` needs (None: more
    than MAX_TASKS). `basis`: where the discordance came from."""

    kind: Kind
    tasks: int
    repeats: int
    comparisons: int
    mde: float | None
    effect: float
    tasks_needed: int | None
    basis: str


@dataclass(frozen=True)
class Discordance:
    """The chance, per repeat, that the two arms disagree on a task, for each task of a
    sample (resampled task by task), and where it came from."""

    per_task: tuple[float, ...]
    basis: str

    @classmethod
    def assumed(cls, kind: Kind) -> Discordance:
        share = ASSUMED[kind]
        basis = (
            f"assumed: half the answers right, the arms disagreeing on {share:.0%} of tasks"
            if kind == "accuracy"
            else f"assumed: the judge deciding {share:.0%} of pairs"
        )
        return cls((share,), basis)


def _spread(kind: Kind, effect: float) -> float:
    """The effect as the chance of a win less that of a loss, per repeat."""
    return effect if kind == "accuracy" else 2 * effect


def _p_values(net: Any, repeats: int) -> Any:
    """The sign-flip test's p of each simulated eval (a row of `net`: each task's wins less
    losses over its repeats). With one repeat the scores are -1, 0 and 1, and the exact
    sign-flip test is the sign test on the decided tasks (`stats.sign_tests`, every row at
    once); with more, the sign-flip test itself, once for each distinct set of scores."""
    import numpy as np

    if repeats > 1:
        return np.array([_sign_flip(tuple(sorted(row.tolist())), repeats) for row in net])
    wins, losses = (net > 0).sum(axis=1), (net < 0).sum(axis=1)
    exact = sign_tests(wins.tolist(), losses.tolist())
    # where the report's test takes its normal approximation, so does this
    return np.array(
        [
            p if w + lo <= EXACT_SIGN_FLIPS else _approximated(int(w), int(lo))
            for p, w, lo in zip(exact, wins, losses, strict=True)
        ]
    )


@lru_cache(maxsize=100_000)
def _approximated(wins: int, losses: int) -> float:
    return sign_flip_test([1.0] * wins + [-1.0] * losses)


@lru_cache(maxsize=100_000)
def _sign_flip(net: tuple[int, ...], repeats: int) -> float:
    return sign_flip_test([n / repeats for n in net])


def _holm_first(p: Any) -> Any:
    """Holm's adjusted p of the first comparison of each simulated eval (a row of `p`)."""
    import numpy as np

    return np.array([holm(row.tolist())[0] for row in p])


def _simulated(rng: Any, discordance: Discordance, sims: int, tasks: int, repeats: int, spread: float) -> Any:
    """Each simulated eval's tasks' net wins over their repeats, shape (sims, tasks)."""
    import numpy as np

    shares = np.asarray(discordance.per_task)[rng.integers(0, len(discordance.per_task), size=(sims, tasks))]
    shares = np.maximum(shares, abs(spread))
    win, loss = (shares + spread) / 2, (shares - spread) / 2
    u = rng.random((sims, tasks, repeats))
    outcome = (u < win[..., None]).astype(np.int64) - ((u >= win[..., None]) & (u < (win + loss)[..., None]))
    return outcome.sum(axis=2)


def power(
    kind: Kind,
    discordance: Discordance,
    tasks: int,
    repeats: int,
    effect: float,
    comparisons: int = 1,
    *,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> float:
    """The share of `simulations` evals in which the comparison is significant by Holm
    over `comparisons` (the others with no effect)."""
    import numpy as np

    rng = np.random.default_rng([seed, tasks, repeats, comparisons, round(effect * 1e6), kind == "judged"])
    p = _p_values(_simulated(rng, discordance, simulations, tasks, repeats, _spread(kind, effect)), repeats)
    if comparisons > 1:
        others = [
            _p_values(_simulated(rng, discordance, simulations, tasks, repeats, 0.0), repeats)
            for _ in range(comparisons - 1)
        ]
        p = _holm_first(np.column_stack([p, *others]))
    return float((p < ALPHA).mean())


def mde(
    kind: Kind, discordance: Discordance, tasks: int, repeats: int, comparisons: int = 1, *, seed: int = 0
) -> float | None:
    """The smallest effect (to 0.01) with 80% power; None when even the largest possible
    (every task won) has less, as at three to five tasks where no p can reach 0.05."""
    top = 0.5 if kind == "judged" else 1.0
    if power(kind, discordance, tasks, repeats, top, comparisons, seed=seed) < POWER:
        return None
    lo, hi = 0, round(top * 100)  # in hundredths
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(kind, discordance, tasks, repeats, mid / 100, comparisons, seed=seed) >= POWER:
            hi = mid
        else:
            lo = mid
    return hi / 100


def tasks_needed(
    kind: Kind,
    discordance: Discordance,
    repeats: int,
    effect: float,
    comparisons: int = 1,
    *,
    start: int = 10,
    seed: int = 0,
) -> int | None:
    """The fewest tasks with 80% power for `effect` (doubling from `start`, then halving
    the gap); None beyond MAX_TASKS."""

    def enough(n: int) -> bool:
        return power(kind, discordance, n, repeats, effect, comparisons, seed=seed) >= POWER

    lo, hi = 1, max(2, start)
    while not enough(hi):
        if hi >= MAX_TASKS:
            return None
        lo, hi = hi, min(MAX_TASKS, 2 * hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def power_row(
    kind: Kind,
    discordance: Discordance,
    tasks: int,
    repeats: int,
    comparisons: int,
    effect: float = DEFAULT_EFFECT,
    *,
    seed: int = 0,
) -> PowerRow:
    return PowerRow(
        kind=kind, tasks=tasks, repeats=repeats, comparisons=comparisons,
        mde=mde(kind, discordance, tasks, repeats, comparisons, seed=seed), effect=effect,
        tasks_needed=tasks_needed(kind, discordance, repeats, effect, comparisons, start=tasks, seed=seed),
        basis=discordance.basis,
    )  # fmt: skip


def observed(kind: Kind, per_task: Sequence[tuple[int, int, int]]) -> Discordance | None:
    """The discordance of an eval's own comparison: each task's share of decided slots
    (wins and losses over its read slots); None without a read task."""
    shares = tuple((w + lo) / (w + lo + t) for w, lo, t in per_task if w + lo + t)
    if not shares:
        return None
    return Discordance(shares, f"this eval's {len(shares)} tasks")


def reading(kind: Kind, smallest: float | None, tasks: int) -> str:
    """What a comparison that is not significant may be read as: never "no difference",
    only that none as large as it could find was found."""
    unit = "in accuracy" if kind == "accuracy" else "in win rate from 0.5"
    if smallest is None:
        top = 1.0 if kind == "accuracy" else 0.5
        smallest_p = 2 / 2**tasks
        return (
            f"no difference of {top:.2f} or more {unit} was found, and on {tasks} tasks none of any size "
            f"could be: no effect reaches p < {ALPHA} after Holm (the least p possible: {smallest_p:.3g})"
        )
    return f"no difference of {smallest:.2f} or more {unit} was found (80% power)"
