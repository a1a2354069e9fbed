"""The parts of an evaluation's report below its headline comparisons: each of the
judge's criteria as its own comparison, and what the eval's requests cost by what made
them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

from pydantic import Field

from dagmca.evaluation.judging import CRITERIA
from dagmca.evaluation.origins import ControlRow
from dagmca.evaluation.paired import tested, verdict_slots
from dagmca.evaluation.records import OVERALL, RunRecord, Verdict
from dagmca.evaluation.stats import Outcome, holm, wilson
from dagmca.graph.schema import Strict


class PairedComparison(Strict):
    """Two arms paired, task by task: wins, losses and ties over the read pairs (judge
    trials combined), pairs without a verdict and unjudged ones apart (never ties),
    the win rate (wins plus half the ties) with its interval bootstrapped over tasks
    (with Wilson's over tasks too below 10 tasks: `few_tasks`), the exact sign-flip
    test's p-value over the tasks' scores, and the same corrected by Holm over every
    row of its table. The report's comparisons and its criteria extend it with what
    was compared."""

    arm: str
    baseline: str
    wins: int
    losses: int
    ties: int
    no_verdict: int = 0
    unjudged: int = 0
    tasks: int = 0
    win_rate: float
    lo: float
    hi: float
    p_value: float
    p_holm: float
    few_tasks: bool = False


class CriterionComparison(PairedComparison):
    """Two arms on one of the judge's criteria (a win holds in both orders), over the
    same pairs as their overall row (a pair with no verdict on the criterion is counted
    so), tested the same way; Holm runs over every criterion row of the eval."""

    criterion: str


class Cost(Strict):
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class EvalSpend(Strict):
    """What the eval's requests cost, by what made them: the arms' sessions, the
    emergence ledger in them, the ledger's controls (the single arm's answers traced
    against the debates' sources) and the judge's pairs; `total` is what the budgets cap."""

    arms: Cost
    ledger: Cost
    control: Cost = Field(default_factory=Cost)  # (a report before the control: none)
    judge: Cost
    total: Cost


def verdict_outcomes(verdicts: Sequence[Verdict]) -> list[Outcome]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for v in verdicts:
        if v.verdict not in ("win", "loss", "tie"):  # unread: apart, never a tie
            continue
        tally[v.task][("win", "loss", "tie").index(v.verdict)] += 1
    return [Outcome(t, w, lo, ti) for t, (w, lo, ti) in sorted(tally.items())]


def summed(outcomes: Sequence[Outcome]) -> tuple[int, int, int]:
    return sum(o.wins for o in outcomes), sum(o.losses for o in outcomes), sum(o.ties for o in outcomes)


def eval_spend(runs: Sequence[RunRecord], judge: Cost, controls: Sequence[ControlRow] = ()) -> EvalSpend:
    arms = Cost(  # each request once: what an arm borrowed is its source's
        calls=sum(r.calls - r.borrowed_calls for r in runs),
        tokens=sum(r.tokens - r.borrowed_tokens for r in runs),
        cost_usd=round(sum(r.cost_usd - r.borrowed_cost_usd for r in runs), 6),
    )
    ledger = Cost(
        calls=sum(r.ledger_calls for r in runs),
        tokens=sum(r.ledger_tokens for r in runs),
        cost_usd=round(sum(r.ledger_cost_usd for r in runs), 6),
    )
    control = Cost(
        calls=sum(c.calls for c in controls),
        tokens=sum(c.tokens for c in controls),
        cost_usd=round(sum(c.cost_usd for c in controls), 6),
    )
    parts = (arms, ledger, control, judge)
    total = Cost(
        calls=sum(c.calls for c in parts),
        tokens=sum(c.tokens for c in parts),
        cost_usd=round(sum(c.cost_usd for c in parts), 6),
    )
    return EvalSpend(arms=arms, ledger=ledger, judge=judge, total=total, control=control)


def criterion_comparisons(
    arms: Sequence[str], verdicts: Sequence[Verdict], seed: int = 0
) -> list[CriterionComparison]:
    """Every pair of arms on each criterion the judge gave (in the order the judge's
    schema lists them), Holm-corrected over all these rows together."""
    found: list[CriterionComparison] = []
    names = sorted({v.criterion for v in verdicts if v.criterion != OVERALL}, key=_criterion_rank)
    for a, b in combinations(arms, 2):
        mine = [v for v in verdicts if (v.arm, v.baseline) == (a, b)]
        for criterion in names:
            if not any(v.criterion == criterion for v in mine):
                continue
            t = tested(verdict_slots(mine, criterion), seed=seed)
            found.append(CriterionComparison(arm=a, baseline=b, criterion=criterion, p_holm=1.0, **vars(t)))
    adjusted = holm([c.p_value for c in found])
    return [c.model_copy(update={"p_holm": p}) for c, p in zip(found, adjusted, strict=True)]


def wilson_rate(wins: int, ties: int, n: int) -> tuple[float, float]:
    """The Wilson interval of a win rate that counts a tie as half a win: a verdict
    scored 0, 1/2 or 1 varies no more than one scored 0 or 1 at the same mean, so the
    interval is, if anything, too wide."""
    return wilson(wins + ties / 2, n)


def _criterion_rank(name: str) -> tuple[int, str]:  # the judge's schema's order
    return (CRITERIA.index(name) if name in CRITERIA else len(CRITERIA), name)
