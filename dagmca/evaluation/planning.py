"""Planning an evaluation before it spends: the power of the comparisons it plans (from
an assumption, or from a pilot's tasks), and the largest number of tasks a budget in
dollars fits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.consistency import Match
from dagmca.evaluation.estimate import project_eval
from dagmca.evaluation.power import DEFAULT_EFFECT, Discordance, Kind, PowerRow, power_row
from dagmca.evaluation.report import EvalReport
from dagmca.evaluation.tasks import Task


def planned(tasks: Sequence[Task], arms: Sequence[Arm], judge_all: bool) -> dict[Kind, tuple[int, int]]:
    """Each kind of comparison the plan makes: its tasks and its comparisons (pairs of
    arms: every arm on accuracy, the arms with a final text when judged)."""
    scored = sum(1 for t in tasks if not t.judged)
    judged = sum(1 for t in tasks if t.judged or judge_all)
    texts = [a for a in arms if not a.kind.derived]
    found: dict[Kind, tuple[int, int]] = {}
    if scored and len(arms) > 1:
        found["accuracy"] = (scored, len(list(combinations(arms, 2))))
    if judged and len(texts) > 1:
        found["judged"] = (judged, len(list(combinations(texts, 2))))
    return found


def planned_power(
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    repeats: int,
    *,
    judge_all: bool = False,
    effect: float = DEFAULT_EFFECT,
    discordance: dict[Kind, Discordance] | None = None,
    seed: int = 0,
) -> list[PowerRow]:
    """The MDE of each kind of comparison at the planned tasks and repeats, with Holm
    over every planned comparison (the report corrects them together), and the tasks
    `effect` needs."""
    kinds = planned(tasks, arms, judge_all)
    family = sum(k for _, k in kinds.values())
    given = discordance or {}
    return [
        power_row(kind, given.get(kind) or Discordance.assumed(kind), n, repeats, family, effect, seed=seed)
        for kind, (n, _) in kinds.items()
    ]


def pilot_discordance(report: EvalReport) -> dict[Kind, Discordance]:
    """The discordance a pilot measured: on accuracy each task's own over every pair of
    arms (a task's pairs of repeats resampled as a whole), on judged pairs the share the
    judge decided."""
    found: dict[Kind, Discordance] = {}
    right: dict[tuple[str, str, int], bool] = {
        (r.arm, r.task, r.repeat): bool(r.correct) for r in report.results if r.correct is not None
    }
    arms = sorted({a for a, _, _ in right})
    shares: dict[str, list[float]] = defaultdict(list)
    for a, b in combinations(arms, 2):
        for (arm, task, repeat), mine in right.items():
            theirs = right.get((b, task, repeat))
            if arm == a and theirs is not None:
                shares[f"{a}|{b}|{task}"].append(float(mine != theirs))
    if shares:
        per_task = tuple(sum(v) / len(v) for v in shares.values())
        found["accuracy"] = Discordance(
            per_task, f"a pilot of {len({k.rsplit('|', 1)[1] for k in shares})} tasks"
        )
    judged = [c for c in report.comparisons if c.kind == "judged"]
    decided, read = sum(c.wins + c.losses for c in judged), sum(c.wins + c.losses + c.ties for c in judged)
    if read:
        found["judged"] = Discordance(
            (decided / read,), f"a pilot's judge deciding {decided} of {read} pairs"
        )
    return found


def fit_budget(
    tasks: Sequence[Task],
    arms: list[Arm],
    base: SessionConfig,
    budget_usd: float,
    *,
    repeats: int = 1,
    judge_trials: int = 1,
    judge_all: bool = False,
    match: Match = "tokens",
) -> int:
    """The most tasks, taken in order, whose projected cost's upper bound is within
    `budget_usd` (0: not even one)."""

    def cost(n: int) -> float:
        found = project_eval(
            list(tasks[:n]), arms, base, repeats=repeats, judge_trials=judge_trials, judge_all=judge_all,
            match=match,
        )  # fmt: skip
        return found.cost_usd_max

    if cost(len(tasks)) <= budget_usd:
        return len(tasks)
    lo, hi = 0, len(tasks)  # cost(lo) fits, cost(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if cost(mid) <= budget_usd else (lo, mid)
    return lo
