"""An evaluation's report: strict models (what `--json` prints and the Evaluation
node summarises), and how they are built from the runs and the verdicts.

Comparisons pair arms task by task: on reference tasks a win is a task the arm got
right and the baseline wrong; on judged tasks it is the judge's verdict, held in both
orders. Each task pools its repeats, and intervals resample tasks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from pydantic import Field

from dagmca.evaluation.breakdown import (
    ArmLedger,
    CriterionComparison,
    EvalSpend,
    PairedComparison,
    arm_ledger,
    summed,
    verdict_outcomes,
)
from dagmca.evaluation.identity import RoleModel
from dagmca.evaluation.records import OVERALL, RunRecord, Verdict
from dagmca.evaluation.stats import Outcome, bootstrap_win_rate, holm, per_dollar, sign_test, wilson, win_rate
from dagmca.models.schema import Strict

__all__ = [
    "EvalReport", "RunRecord", "Verdict", "arm_row", "comparisons", "noise_floor", "result_rows", "unread",
]  # fmt: skip


class Accuracy(Strict):
    value: float
    lo: float
    hi: float
    scored: int
    correct: int
    parse_failures: int


class ArmRow(Strict):
    arm: str
    protocol: str
    tasks: int
    sessions: int
    calls: int
    tokens: int
    cost_usd: float
    accuracy: Accuracy | None
    accuracy_per_usd: float | None = None
    mean_log10_error: float | None = None
    ledger: ArmLedger | None = None


class Comparison(PairedComparison):
    """Two arms over the tasks: on accuracy or by the judge's overall verdict, with the
    bootstrap interval over tasks."""

    kind: Literal["accuracy", "judged"]


class JudgeInfo(Strict):
    model: str
    orders: int
    trials: int
    prompt_version: str


class NoiseFloor(Strict):
    """An arm against its own repeat: the size of a difference that is noise."""

    arm: str
    kind: Literal["accuracy", "judged"]
    wins: int
    losses: int
    ties: int
    win_rate: float
    lo: float
    hi: float


class ResultRow(Strict):
    arm: str
    task: str
    repeat: int
    session: str
    status: str
    answer: str | None
    correct: bool | None
    parse_failure: bool


class EvalReport(Strict):
    eval_id: str
    tasks: int
    repeats: int
    arms: list[ArmRow]
    comparisons: list[Comparison]
    criteria: list[CriterionComparison] = Field(default_factory=list)
    judge: JudgeInfo | None
    noise_floor: NoiseFloor | None
    # sessions not run because the eval's budget was spent: a rerun with a raised budget
    # runs them; until then the comparisons pair only what both arms ran
    skipped: int = 0
    # judged pairs (and trials) the judge did not answer (its endpoint failed, or the
    # budget was spent), and those it answered unreadably: left out of every comparison,
    # never counted as ties; a rerun asks the judge again
    unjudged: int = 0
    no_verdict: int = 0
    models: list[RoleModel] = Field(default_factory=list)  # what played each role
    spend: EvalSpend | None = None
    results: list[ResultRow]


def arm_row(name: str, runs: Sequence[RunRecord]) -> ArmRow:
    scored = [r for r in runs if r.score.correct is not None]
    calls = sum(r.calls for r in runs)
    cost = sum(r.cost_usd for r in runs)
    accuracy = None
    if scored:
        right = sum(1 for r in scored if r.score.correct)
        lo, hi = wilson(right, len(scored))
        failures = sum(1 for r in scored if not r.score.parsed)
        accuracy = Accuracy(
            value=right / len(scored),
            lo=lo,
            hi=hi,
            scored=len(scored),
            correct=right,
            parse_failures=failures,
        )
    errors = [r.score.log10_error for r in runs if r.score.log10_error is not None]
    return ArmRow(
        arm=name,
        protocol=runs[0].protocol if runs else "",
        tasks=len({r.task for r in runs}),
        sessions=len(runs),
        calls=calls,
        tokens=sum(r.tokens for r in runs),
        cost_usd=round(cost, 6),
        accuracy=accuracy,
        accuracy_per_usd=per_dollar(accuracy.value if accuracy else None, cost),
        mean_log10_error=sum(errors) / len(errors) if errors else None,
        ledger=arm_ledger(runs),
    )


def accuracy_outcomes(arm: Sequence[RunRecord], baseline: Sequence[RunRecord]) -> list[Outcome]:
    """Per task, over the repeats both arms ran: right against wrong."""
    theirs = {(r.task, r.repeat): r.score.correct for r in baseline if r.score.correct is not None}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in arm:
        other = theirs.get((r.task, r.repeat))
        if r.score.correct is None or other is None:
            continue
        slot = 0 if r.score.correct and not other else 1 if other and not r.score.correct else 2
        tally[r.task][slot] += 1
    return [Outcome(t, w, lo, ti) for t, (w, lo, ti) in sorted(tally.items())]


def compare(
    arm: str, baseline: str, kind: Literal["accuracy", "judged"], outcomes: Sequence[Outcome], seed: int
) -> Comparison:
    wins, losses, ties = summed(outcomes)
    lo, hi = bootstrap_win_rate(outcomes, seed=seed)
    return Comparison(
        arm=arm, baseline=baseline, kind=kind, wins=wins, losses=losses, ties=ties,
        win_rate=win_rate(outcomes), lo=lo, hi=hi, p_value=sign_test(wins, losses), p_holm=1.0,
    )  # fmt: skip


def comparisons(
    arms: Sequence[str], runs: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int = 0
) -> list[Comparison]:
    """Every pair of arms (earlier arm against later), on accuracy where there are
    reference tasks and on verdicts where pairs were judged; Holm-corrected together,
    since a reader scans them all for the one that is significant."""
    by_arm: dict[str, list[RunRecord]] = defaultdict(list)
    for r in runs:
        by_arm[r.arm].append(r)
    found: list[Comparison] = []
    for a, b in combinations(arms, 2):
        outcomes = accuracy_outcomes(by_arm[a], by_arm[b])
        if outcomes:
            found.append(compare(a, b, "accuracy", outcomes, seed))
        judged = [v for v in verdicts if (v.arm, v.baseline) == (a, b) and v.criterion == OVERALL]
        if verdict_outcomes(judged):
            found.append(compare(a, b, "judged", verdict_outcomes(judged), seed))
    adjusted = holm([c.p_value for c in found])
    return [c.model_copy(update={"p_holm": p}) for c, p in zip(found, adjusted, strict=True)]


def noise_floor(
    arm: str, runs: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int = 0
) -> NoiseFloor | None:
    """`arm`'s repeat 1 against its repeat 0: judged verdicts when there are any
    (`verdicts` hold them as arm `arm#1` against `arm#0`), else right against wrong."""
    mine = [v for v in verdicts if (v.arm, v.baseline, v.criterion) == (f"{arm}#1", f"{arm}#0", OVERALL)]
    kind: Literal["accuracy", "judged"] = "judged" if mine else "accuracy"
    if mine:
        outcomes = verdict_outcomes(mine)
    else:
        own = [r for r in runs if r.arm == arm]
        second = [RunRecord(**{**r.__dict__, "repeat": 0}) for r in own if r.repeat == 1]
        outcomes = accuracy_outcomes(second, [r for r in own if r.repeat == 0])
    if not outcomes:
        return None
    wins, losses, ties = summed(outcomes)
    lo, hi = bootstrap_win_rate(outcomes, seed=seed)
    return NoiseFloor(
        arm=arm, kind=kind, wins=wins, losses=losses, ties=ties, win_rate=win_rate(outcomes), lo=lo, hi=hi
    )


def unread(verdicts: Sequence[Verdict], kind: str) -> int:
    """Judged pairs (each trial apart) whose overall verdict is `kind`."""
    return sum(1 for v in verdicts if v.criterion == OVERALL and v.verdict == kind)


def result_rows(runs: Sequence[RunRecord]) -> list[ResultRow]:
    return [
        ResultRow(
            arm=r.arm,
            task=r.task,
            repeat=r.repeat,
            session=r.session,
            status=r.status,
            answer=r.answer,
            correct=r.score.correct,
            parse_failure=not r.score.parsed,
        )
        for r in runs
    ]
