"""Paired comparisons on the unit that was sampled: the task.

Repeats and judge trials of one task are clustered observations, not new tasks. So a
pair's judge trials are combined into one verdict first (the sign of their wins less
their losses; any trial unread leaves the pair unread), each task gets one score over
its repeats, d_t = (wins_t - losses_t) / n_t, and the test is the exact sign-flip
permutation test over tasks; the interval is a bootstrap over tasks. A pair that was
not read (`no_verdict`, `unjudged`) is counted apart in every row alike and is never a
tie, so every row of one comparison has the same pairs behind it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dagmca.evaluation.records import OVERALL, RunRecord, Verdict
from dagmca.evaluation.stats import sign_flip_test, task_interval

UNREAD = ("unjudged", "no_verdict")


@dataclass(frozen=True)
class Slot:
    """One paired observation of one task: an outcome per repeat (or pair of repeats,
    for the noise floor), trials already combined."""

    task: str
    slot: str
    outcome: str  # win, loss, tie, no_verdict or unjudged


@dataclass(frozen=True)
class Tested:
    """What a comparison row shows: counts over its slots, the win rate (wins plus
    half the ties, over the read slots) with its interval over tasks, and the
    sign-flip p-value over tasks."""

    wins: int
    losses: int
    ties: int
    no_verdict: int
    unjudged: int
    tasks: int  # tasks with at least one read slot: the test's sample size
    win_rate: float
    lo: float
    hi: float
    p_value: float
    few_tasks: bool


def combine_trials(outcomes: Iterable[str]) -> str:
    """A pair's judge trials as one verdict: unread if any trial is (the rerun asks
    again), else the sign of wins less losses."""
    seen = list(outcomes)
    for unread in UNREAD:
        if unread in seen:
            return unread
    balance = seen.count("win") - seen.count("loss")
    return "win" if balance > 0 else "loss" if balance < 0 else "tie"


def verdict_slots(verdicts: Sequence[Verdict], criterion: str = OVERALL) -> list[Slot]:
    """The slots of one arm pair's verdicts on `criterion`, over the pairs its overall
    verdicts name: a pair the judge gave no verdict on this criterion is `no_verdict`
    here, so a criterion row counts the same pairs as the overall row."""
    overall: dict[tuple[str, int], list[str]] = defaultdict(list)
    mine: dict[tuple[str, int], list[str]] = defaultdict(list)
    trials: dict[tuple[str, int], set[int]] = defaultdict(set)
    for v in verdicts:
        key = (v.task, v.repeat)
        if v.criterion == OVERALL:
            overall[key].append(v.verdict)
            trials[key].add(v.trial)
        if v.criterion == criterion:
            mine[key].append(v.verdict)
    slots = []
    for key in sorted(overall):
        combined = combine_trials(overall[key])
        if criterion != OVERALL and combined not in UNREAD:
            given = mine.get(key, [])
            # a trial that gave no verdict on this criterion leaves it unread
            combined = combine_trials(given) if len(given) == len(trials[key]) else "no_verdict"
        slots.append(Slot(key[0], str(key[1]), combined))
    return slots


def accuracy_slots(arm: Sequence[RunRecord], baseline: Sequence[RunRecord]) -> list[Slot]:
    """Right against wrong, per task and repeat both arms ran and scored."""
    theirs = {(r.task, r.repeat): r.score.correct for r in baseline if r.score.correct is not None}
    slots = []
    for r in arm:
        other = theirs.get((r.task, r.repeat))
        if r.score.correct is None or other is None:
            continue
        outcome = (
            "win" if r.score.correct and not other else "loss" if other and not r.score.correct else "tie"
        )
        slots.append(Slot(r.task, str(r.repeat), outcome))
    return slots


def task_scores(slots: Sequence[Slot]) -> dict[str, tuple[int, int, int]]:
    """Wins, losses and ties of each task over its read slots."""
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for s in slots:
        if s.outcome in ("win", "loss", "tie"):
            by[s.task][("win", "loss", "tie").index(s.outcome)] += 1
    return {t: (w, lo, ti) for t, (w, lo, ti) in sorted(by.items())}


def tested(slots: Sequence[Slot], seed: int = 0) -> Tested:
    """The row of `slots`: d_t per task into the sign-flip test, the win rate's
    interval bootstrapped over tasks."""
    per_task = task_scores(slots)
    wins = sum(w for w, _, _ in per_task.values())
    losses = sum(lo for _, lo, _ in per_task.values())
    ties = sum(t for _, _, t in per_task.values())
    read = wins + losses + ties
    d = [(w - lo) / (w + lo + t) for w, lo, t in per_task.values()]
    lo_, hi_, few = task_interval([(w + t / 2, w + lo + t) for w, lo, t in per_task.values()], seed=seed)
    return Tested(
        wins=wins, losses=losses, ties=ties,
        no_verdict=sum(1 for s in slots if s.outcome == "no_verdict"),
        unjudged=sum(1 for s in slots if s.outcome == "unjudged"),
        tasks=len(per_task), win_rate=(wins + ties / 2) / read if read else 0.5,
        lo=lo_ if read else 0.0, hi=hi_ if read else 1.0, p_value=sign_flip_test(d), few_tasks=few,
    )  # fmt: skip
