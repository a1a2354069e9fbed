"""An evaluation's report: strict models (what `--json` prints and the Evaluation
node summarises), and how they are built from the runs and the verdicts.

Comparisons pair arms task by task: on reference tasks a win is a task the arm got
right and the baseline wrong; on judged tasks it is the judge's verdict, held in both
orders. Each task pools its repeats, and intervals resample tasks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Literal

from pydantic import Field

from dagmca.evaluation.breakdown import CriterionComparison, EvalSpend, PairedComparison
from dagmca.evaluation.identity import RoleModel, TaskSet
from dagmca.evaluation.judgecheck.models import JudgeCheckReport
from dagmca.evaluation.judging import READ
from dagmca.evaluation.length import lc_win_rate, mean_words, sized
from dagmca.evaluation.noise import NoiseFloor
from dagmca.evaluation.notices import Notice
from dagmca.evaluation.origins import (
    ArmCitations,
    ArmLedger,
    ControlRow,
    ShareDifference,
    arm_citations,
    arm_ledger,
)
from dagmca.evaluation.paired import Slot, accuracy_slots, task_scores, tested, verdict_slots
from dagmca.evaluation.power import ALPHA, Kind, mde, observed, reading
from dagmca.evaluation.records import OVERALL, UNREAD, RunRecord, Verdict
from dagmca.evaluation.stats import bootstrap_ratio, holm, per_dollar, task_interval
from dagmca.graph.schema import Strict

__all__ = [
    "ControlRow", "EvalReport", "RunRecord", "Verdict", "arm_row", "comparisons", "result_rows", "unread",
]  # fmt: skip


class Accuracy(Strict):
    """Right answers over the scored sessions, its interval bootstrapped over tasks
    (a task's repeats are one cluster), with Wilson's over tasks too below 10 tasks
    (`few_tasks`)."""

    value: float
    lo: float
    hi: float
    scored: int
    correct: int
    parse_failures: int
    few_tasks: bool = False


class Interval(Strict):
    value: float
    lo: float
    hi: float


class Log10Error(Strict):
    """The mean order-of-magnitude miss of an arm's numeric answers, every one of them
    counted: an answer it cannot score (missing, unreadable, zero or of the wrong sign)
    counts as the cap, and so does a miss beyond it, so failing to answer never looks
    accurate."""

    mean: float
    scored: int
    capped: int  # answers given the cap: not scorable, or missing by more


class Tokens(Strict):
    """An arm's tokens: what its prompts carried and what its replies wrote."""

    prompt: int
    completion: int
    total: int


class ArmRow(Strict):
    arm: str
    protocol: str
    tasks: int
    sessions: int
    calls: int
    tokens: Tokens
    cost_usd: float
    accuracy: Accuracy | None
    # quality per dollar of one session (accuracy over the mean cost of a session, so
    # sessions a budget skipped make no arm look cheaper)
    accuracy_per_usd: float | None = None
    cost_per_session: Interval | None = None  # bootstrapped over tasks
    coverage: float = 1.0  # share of the eval's tasks this arm has a session on
    temperature: float | None = None  # its debaters' (a vote's: its samples')
    log10_error: Log10Error | None = None
    ledger: ArmLedger | None = None  # its final claims' origins (traced with --ledger final or all)
    # the control of those shares: the single arm's answers to the same tasks traced against
    # this arm's sources, which the lone agent never read; and this arm's emergent share
    # above the control's (None: no single arm, or nothing traced)
    control: ArmLedger | None = None
    emergent_above_control: ShareDifference | None = None
    citations: ArmCitations | None = None  # what its final answers cite (None: it has none)
    mean_words: float | None = None  # of its final answers (None: it has none, as first-vote)
    unread: int = 0  # first-vote: tasks whose source has no first-round answer to read
    model: RoleModel | None = None  # its debaters' model, under its own settings


class Comparison(PairedComparison):
    """Two arms over the tasks: on accuracy or by the judge's overall verdict, with the
    bootstrap interval over tasks. A judged one also says how many read pairs (each
    judge trial apart) split with the order the answers were shown in (counted as
    ties), and its length-controlled win rate (AlpacaEval 2.0's regression on the
    length difference, read at zero difference) with its interval over tasks."""

    kind: Literal["accuracy", "judged"]
    order_splits: int | None = None
    order_split_rate: float | None = None
    lc_win_rate: float | None = None
    lc_lo: float | None = None
    lc_hi: float | None = None
    # the smallest effect (accuracy points, or win-rate points above 0.5) this comparison
    # had 80% power to find, by simulating its own test on its own tasks' discordance
    # with Holm over the report's comparisons (None: too few tasks for any effect)
    mde: float | None = None
    reading: str | None = None  # what a comparison that is not significant may be read as
    # a traced arm against the single arm, whose answers are its ledger's control: the
    # arm's emergent share above the control's (the arm's row carries the same)
    emergent_above_control: ShareDifference | None = None


class JudgeInfo(Strict):
    """The judge of an eval's pairs, and its latest `dagmca judge-check` (None: never
    checked)."""

    model: str
    orders: int
    trials: int
    prompt_version: str
    check: JudgeCheckReport | None = None


class ResultRow(Strict):
    arm: str
    task: str
    repeat: int
    session: str
    status: str
    answer: str | None
    correct: bool | None
    parse_failure: bool


# the result file's layout: 2 adds the task set, versions, power, length and the judge's
# check; 3 the integrator's share, the ledger's control, citations and `controls`; a
# file without the field is of layout 1
SCHEMA_VERSION = 3


class EvalReport(Strict):
    """What an eval found (`--json`, `eval.json`, the Evaluation node's summary): a result
    file that says what it was run on (the task set by the hash of its tasks, dagmca's
    and the prompts' versions, every model), so that two can be compared."""

    schema_version: int = SCHEMA_VERSION
    eval_id: str
    task_set: TaskSet | None = None
    dagmca_version: str = ""
    prompt_version: str = ""  # dagmca's prompts, that the arms' sessions ran with
    tasks: int
    repeats: int
    arms: list[ArmRow]
    comparisons: list[Comparison]
    criteria: list[CriterionComparison] = Field(default_factory=list)
    judge: JudgeInfo | None
    # each arm whose samples vary against itself (with --noise-floor and repeats)
    noise_floors: list[NoiseFloor] = Field(default_factory=list)
    notices: list[Notice] = Field(default_factory=list)  # what to read the numbers with
    # sessions (and ledger controls) not run because the eval's budget was spent: a rerun
    # with a raised budget runs them; until then the comparisons pair only what both arms ran
    skipped: int = 0
    # judged pairs (and trials) the judge did not answer (its endpoint failed, or the
    # budget was spent), and those it answered unreadably: left out of every comparison,
    # never counted as ties; a rerun asks the judge again
    unjudged: int = 0
    no_verdict: int = 0
    models: list[RoleModel] = Field(default_factory=list)  # what played each role
    match: str = "tokens"  # what a self-consistency vote's samples were matched to its target by
    spend: EvalSpend | None = None
    results: list[ResultRow]
    # every control traced (arms[].control pools them): kept in the Evaluation's summary,
    # where a rerun reads them back instead of tracing again
    controls: list[ControlRow] = Field(default_factory=list)


LOG10_CAP = 3.0  # a thousandfold miss: what an unscorable numeric answer counts as


def arm_row(name: str, runs: Sequence[RunRecord], total_tasks: int | None = None, seed: int = 0) -> ArmRow:
    scored = [r for r in runs if r.score.correct is not None]
    calls = sum(r.calls for r in runs)
    cost = sum(r.cost_usd for r in runs)
    accuracy = None
    if scored:
        right = sum(1 for r in scored if r.score.correct)
        lo, hi, few = task_interval(_by_task(scored, lambda r: float(bool(r.score.correct))), seed=seed)
        failures = sum(1 for r in scored if not r.score.parsed)
        accuracy = Accuracy(
            value=right / len(scored), lo=lo, hi=hi, scored=len(scored), correct=right,
            parse_failures=failures, few_tasks=few,
        )  # fmt: skip
    per_session = None
    if runs:
        c_lo, c_hi = bootstrap_ratio(_by_task(runs, lambda r: r.cost_usd), seed=seed, bounded=False)
        per_session = Interval(value=cost / len(runs), lo=c_lo, hi=c_hi)
    tasks = len({r.task for r in runs})
    return ArmRow(
        arm=name, protocol=runs[0].protocol if runs else "", tasks=tasks, sessions=len(runs), calls=calls,
        tokens=_tokens(runs), cost_usd=round(cost, 6), accuracy=accuracy,
        accuracy_per_usd=per_dollar(accuracy.value if accuracy else None, cost / len(runs) if runs else 0.0),
        cost_per_session=per_session, coverage=tasks / total_tasks if total_tasks else 1.0,
        log10_error=log10_error(runs), ledger=arm_ledger(runs, seed), citations=arm_citations(runs, seed),
        mean_words=mean_words([r.words for r in runs if r.words is not None]),
        unread=sum(1 for r in runs if r.status == UNREAD),
    )  # fmt: skip


def _tokens(runs: Sequence[RunRecord]) -> Tokens:
    total, prompt = sum(r.tokens for r in runs), sum(r.prompt_tokens for r in runs)
    return Tokens(prompt=prompt, completion=total - prompt, total=total)


def _by_task(runs: Sequence[RunRecord], value: Callable[[RunRecord], float]) -> list[tuple[float, float]]:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in runs:
        sums[r.task][0] += value(r)
        sums[r.task][1] += 1
    return [(k, n) for k, n in sums.values()]


def log10_error(runs: Sequence[RunRecord]) -> Log10Error | None:
    numeric = [r for r in runs if r.score.numeric]
    if not numeric:
        return None
    errors = [r.score.log10_error for r in numeric]
    capped = sum(1 for e in errors if e is None or e > LOG10_CAP)
    total = sum(LOG10_CAP if e is None else min(e, LOG10_CAP) for e in errors)
    return Log10Error(mean=total / len(numeric), scored=len(numeric) - capped, capped=capped)


def compare(
    arm: str, baseline: str, kind: Literal["accuracy", "judged"], slots: Sequence[Slot], seed: int
) -> Comparison:
    return Comparison(arm=arm, baseline=baseline, kind=kind, p_holm=1.0, **vars(tested(slots, seed=seed)))


def judged_row(
    arm: Sequence[RunRecord], baseline: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int
) -> tuple[Comparison, list[Slot]] | None:
    """The judged comparison of two arms' verdicts (from `arm`'s side), with its order
    splits and its length-controlled win rate, and its slots; None when no pair was
    judged."""
    slots = verdict_slots(verdicts)
    if not slots:
        return None
    overall = [v for v in verdicts if v.criterion == OVERALL]
    read = [v for v in overall if v.verdict in READ]
    splits = sum(1 for v in read if v.split)
    lc = lc_win_rate(sized(slots, _words(arm), _words(baseline)), seed=seed)
    row = compare(verdicts[0].arm, verdicts[0].baseline, "judged", slots, seed)
    judged = row.model_copy(
        update={
            "order_splits": splits,
            "order_split_rate": splits / len(read) if read else None,
            **({"lc_win_rate": lc.value, "lc_lo": lc.lo, "lc_hi": lc.hi} if lc is not None else {}),
        }
    )
    return judged, slots


def _words(runs: Sequence[RunRecord]) -> dict[tuple[str, str], int]:
    return {(r.task, str(r.repeat)): r.words for r in runs if r.words is not None}


def comparisons(
    arms: Sequence[str], runs: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int = 0
) -> list[Comparison]:
    """Every pair of arms (earlier arm against later), on accuracy where there are
    reference tasks and on verdicts where pairs were judged; Holm-corrected together,
    since a reader scans them all for the one that is significant; each with the effect
    it had the power to find."""
    by_arm: dict[str, list[RunRecord]] = defaultdict(list)
    for r in runs:
        by_arm[r.arm].append(r)
    found: list[tuple[Comparison, list[Slot]]] = []
    for a, b in combinations(arms, 2):
        slots = accuracy_slots(by_arm[a], by_arm[b])
        if slots:
            found.append((compare(a, b, "accuracy", slots, seed), slots))
        mine = [v for v in verdicts if (v.arm, v.baseline) == (a, b)]
        judged = judged_row(by_arm[a], by_arm[b], mine, seed)
        if judged is not None:
            found.append(judged)
    adjusted = holm([c.p_value for c, _ in found])
    return [
        c.model_copy(update={"p_holm": p, **powered(c.kind, slots, p, len(found), seed)})
        for (c, slots), p in zip(found, adjusted, strict=True)
    ]


def powered(kind: Kind, slots: Sequence[Slot], p_holm: float, family: int, seed: int) -> dict[str, object]:
    """A comparison's MDE on its own tasks' discordance, and, when it is not significant,
    what it may be read as."""
    per_task = task_scores(slots)
    found = observed(kind, list(per_task.values()))
    if found is None:
        return {}
    repeats = max(1, round(sum(w + lo + t for w, lo, t in per_task.values()) / len(per_task)))
    smallest = mde(kind, found, len(per_task), repeats, family, seed=seed)
    return {"mde": smallest, "reading": None if p_holm < ALPHA else reading(kind, smallest, len(per_task))}


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
