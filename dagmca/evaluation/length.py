"""Answer length in an evaluation: the words of each final answer, and the
length-controlled win rate of a judged comparison.

A judge that prefers the longer answer makes the wordier arm "win" at equal quality.
AlpacaEval 2.0 (Dubois et al. 2024) controls for it by regression: a logistic model of
the pair's outcome on the normalised length difference, tanh(delta / sd(delta)), read
at zero difference, which answers "what would the judge prefer were the two answers
equally long?". Here the model has the length term and an intercept (AlpacaEval's
instruction-difficulty term needs many models' answers to one instruction set, which
an eval has not), a tie counts as half a win (the outcome is a share, as AlpacaEval's
preference is), and the interval is a percentile bootstrap over tasks, every resample
fitted at once."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dagmca.evaluation.paired import Slot
from dagmca.evaluation.stats import FEW_TASKS, student_t_quantile, wilson

# a weak ridge on both coefficients: it changes nothing where the data decide them, and
# keeps them finite where they cannot (every pair won, or won exactly when longer), as
# the L1 penalty at C=100 of AlpacaEval's fit does
RIDGE = 0.01
NEWTON_STEPS = 40
INFLATE = 1.0
OUTCOME = {"win": 1.0, "loss": 0.0, "tie": 0.5}


def words(text: str | None) -> int | None:
    """The words of a final answer (None: there is none)."""
    return None if text is None else len(text.split())


@dataclass(frozen=True)
class Sized:
    """One read judged pair: its task, its outcome from the arm's side (1 a win, 0 a
    loss, 0.5 a tie) and the arm's answer's words less the baseline's."""

    task: str
    outcome: float
    delta: float


@dataclass(frozen=True)
class LengthControlled:
    value: float
    lo: float
    hi: float


def sized(
    slots: Sequence[Slot], mine: Mapping[tuple[str, str], int], theirs: Mapping[tuple[str, str], int]
) -> list[Sized]:
    """The read slots whose two answers' lengths are known (`mine`, `theirs`: words by
    (task, slot))."""
    found = []
    for s in slots:
        key = (s.task, s.slot)
        if s.outcome in OUTCOME and key in mine and key in theirs:
            found.append(Sized(s.task, OUTCOME[s.outcome], float(mine[key] - theirs[key])))
    return found


def lc_win_rate(
    pairs: Sequence[Sized], *, seed: int = 0, resamples: int = 2000, level: float = 0.95
) -> LengthControlled | None:
    """The length-controlled win rate of `pairs` with its bootstrap interval over
    tasks (a task's pairs resampled together); None without a pair."""
    import numpy as np  # here: numpy is a noticeable import for the CLI's other commands

    if not pairs:
        return None
    tasks = sorted({p.task for p in pairs})
    index = {t: i for i, t in enumerate(tasks)}
    y = np.array([p.outcome for p in pairs])
    delta = np.array([p.delta for p in pairs])
    sd = float(delta.std(ddof=1)) if len(pairs) > 1 else 0.0
    x = np.tanh(delta / sd) if sd > 0 else np.zeros_like(delta)
    of_task = np.array([index[p.task] for p in pairs])
    picks = np.random.default_rng(seed).integers(0, len(tasks), size=(resamples, len(tasks)))
    counts = np.zeros((resamples, len(tasks)))
    np.add.at(counts, (np.arange(resamples)[:, None], picks), 1.0)
    weights = np.vstack([np.ones(len(tasks)), counts])[:, of_task]  # row 0: the data as drawn
    intercepts, slopes = _fit(x, y, weights)
    centre = intercepts[0]
    # the resamples' spread widened by sqrt(g / (g - 1)) for g tasks, on the logit scale
    # (the bootstrap's variance is the sample's, biased low on the few tasks an eval has)
    g = len(tasks)
    spread = intercepts[1:] - centre
    drawn = centre + spread * (math.sqrt(g / (g - 1)) if g > 1 else 1.0) * INFLATE
    tail = (1 - level) / 2
    b_lo, b_hi = (float(v) for v in np.quantile(drawn, [tail, 1 - tail]))
    w_lo, w_hi = _robust(x, y, of_task, g, float(centre), float(slopes[0]), level)
    lo, hi = (float(1 / (1 + math.exp(-v))) for v in (min(b_lo, w_lo), max(b_hi, w_hi)))
    rates = 1 / (1 + np.exp(-intercepts))
    if confounded(pairs):
        lo, hi = 0.0, 1.0
    elif len({p.outcome for p in pairs}) == 1 or len(tasks) < FEW_TASKS:
        # as the raw rate's: every pair alike, or few tasks, and the resamples cannot vary
        w_lo, w_hi = wilson(float(y.sum()), len(pairs))
        lo, hi = min(lo, w_lo), max(hi, w_hi)
    return LengthControlled(value=float(rates[0]), lo=lo, hi=hi)


def confounded(pairs: Sequence[Sized]) -> bool:
    """The verdicts follow the length difference exactly (every loss shorter than
    every win, no tie) and the step between them takes in zero difference: any
    boundary in that gap fits every pair, so at equal length the pairs say nothing,
    and the fitted rate (the gap's middle) is no estimate. A percentile bootstrap
    cannot show this: its resamples keep the gap."""
    if any(p.outcome not in (0.0, 1.0) for p in pairs):
        return False
    losses = [p.delta for p in pairs if p.outcome == 0.0]
    wins = [p.delta for p in pairs if p.outcome == 1.0]
    below, above = max(losses, default=-math.inf), min(wins, default=math.inf)
    return below < above and below <= 0 <= above


def _fit(x: object, y: object, weights: object) -> tuple[Any, Any]:
    """The intercepts of the ridge-penalised logistic fits of `y` on `x`, one per row
    of `weights` (each a resample's weight of every pair), by Newton's method on all
    rows at once: two coefficients, so each step solves its 2x2 system by hand."""
    import numpy as np

    xs, ys, w = np.asarray(x), np.asarray(y), np.asarray(weights)
    b0 = np.zeros(w.shape[0])
    b1 = np.zeros(w.shape[0])
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-(b0[:, None] + b1[:, None] * xs)))
        r, s = w * (ys - p), w * p * (1 - p)
        g0, g1 = r.sum(axis=1) - RIDGE * b0, (r * xs).sum(axis=1) - RIDGE * b1
        h00, h01, h11 = s.sum(axis=1) + RIDGE, (s * xs).sum(axis=1), (s * xs * xs).sum(axis=1) + RIDGE
        det = h00 * h11 - h01 * h01
        step0, step1 = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        b0, b1 = b0 + step0, b1 + step1
        if float(np.max(np.abs(step0)) + np.max(np.abs(step1))) < 1e-9:
            break
    return b0, b1


def _robust(x: Any, y: Any, of_task: Any, g: int, b0: float, b1: float, level: float) -> tuple[float, float]:
    """The Wald interval of the intercept with the cluster-robust (sandwich) variance
    over tasks, its small-sample factor g / (g - 1) and Student's t on g - 1 degrees:
    the bootstrap's percentiles of a fitted coefficient undercover on tens of tasks,
    and the report takes the wider of the two, as the raw rate's interval does."""
    import numpy as np

    if g < 2:
        return -math.inf, math.inf
    p = 1 / (1 + np.exp(-(b0 + b1 * x)))
    s = p * (1 - p)
    hessian = np.array([[s.sum() + RIDGE, (s * x).sum()], [(s * x).sum(), (s * x * x).sum() + RIDGE]])
    scores = np.zeros((g, 2))
    np.add.at(scores, of_task, np.stack([y - p, (y - p) * x], axis=1))
    inverse = np.linalg.inv(hessian)
    variance = inverse @ (scores.T @ scores * g / (g - 1)) @ inverse
    half = student_t_quantile(level, g - 1) * math.sqrt(max(0.0, float(variance[0, 0])))
    return b0 - half, b0 + half


def mean_words(counts: Sequence[int]) -> float | None:
    """The mean words of an arm's final answers; None when it has none."""
    return math.fsum(counts) / len(counts) if counts else None
