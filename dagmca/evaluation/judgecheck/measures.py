"""The measures of a judge check, from the pairs the judge read, and their statuses
against the thresholds the Evaluate guide states (and cites).

Each rate is over pairs with its Wilson interval. A status is read off the rate itself;
the interval says how far to trust it (few pairs, a wide interval)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from dagmca.evaluation.judgecheck.models import Check, CheckName, CheckStatus
from dagmca.evaluation.judging import CRITERION, ORDERS, READ, PairResult
from dagmca.evaluation.stats import wilson

# position: the share of pairs whose verdict holds with the order swapped. MT-Bench
# (Zheng et al. 2023) found GPT-4 consistent on 65% of swapped pairs of close answers; the
# battery's pairs are far apart (a padded copy, a near miss against a reference), so a
# judge fit to trust holds most of them
POSITION_PASS, POSITION_WARN = 0.80, 0.65
# reference: the share of right answers preferred to a near miss with the reference shown
# (the task JudgeBench and RewardBench score judges on)
REFERENCE_PASS, REFERENCE_WARN = 0.90, 0.75
# length and self-preference: 0.5 is indifferent; the distance from it that warns and fails
LEAN_PASS, LEAN_WARN = 0.10, 0.20
ORDER: tuple[CheckStatus, ...] = (CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL)


class PairKind(StrEnum):
    LENGTH = "length"  # (the padded restatement, the answer)
    REFERENCE = "reference"  # (the right answer, the near miss), the reference shown
    SELF = "self"  # (the judge's own model's answer, the other model's)


@dataclass(frozen=True)
class Judged:
    """One pair of the battery as the judge read it, the first answer as the "arm": the
    padded one, the right one, the judge's own model's. For a self pair, whether each
    answer was right against the task's reference."""

    kind: PairKind
    task: str
    result: PairResult
    first_right: bool | None = None
    second_right: bool | None = None


def _status_above(rate: float, passing: float, warning: float) -> CheckStatus:
    return CheckStatus.PASS if rate >= passing else CheckStatus.WARN if rate >= warning else CheckStatus.FAIL


def _status_lean(rate: float) -> CheckStatus:
    lean = abs(rate - 0.5)
    return (
        CheckStatus.PASS if lean <= LEAN_PASS else CheckStatus.WARN if lean <= LEAN_WARN else CheckStatus.FAIL
    )


def _rate(name: CheckName, k: float, n: int, status_of: Callable[[float], CheckStatus], note: str) -> Check:
    if n == 0:
        return Check(name=name, rate=None, lo=None, hi=None, n=0, status=CheckStatus.NOT_MEASURED, note=note)
    lo, hi = wilson(k, n)
    rate = k / n
    return Check(name=name, rate=rate, lo=lo, hi=hi, n=n, status=status_of(rate), note=note)


def _both_read(result: PairResult) -> bool:
    said = [v.verdict for v in result.orders if v.criterion == CRITERION]
    return len(said) == len(ORDERS) and all(v in READ for v in said)


def position(pairs: Sequence[Judged]) -> Check:
    """The share of pairs, of every kind, read in both orders whose verdict held when
    the order was swapped."""
    read = [p for p in pairs if _both_read(p.result)]
    held = sum(1 for p in read if not p.result.split)
    return _rate(
        CheckName.POSITION, held, len(read),
        lambda r: _status_above(r, POSITION_PASS, POSITION_WARN),
        "pairs whose verdict held with the order swapped, over the pairs read in both orders",
    )  # fmt: skip


def length(pairs: Sequence[Judged]) -> Check:
    """The share of decided pairs (both orders agreeing) won by the padded answer."""
    decided = [p for p in pairs if p.kind is PairKind.LENGTH and p.result.verdict in ("win", "loss")]
    longer = sum(1 for p in decided if p.result.verdict == "win")
    return _rate(
        CheckName.LENGTH, longer, len(decided), _status_lean,
        "decided pairs won by the answer restated at twice the length with nothing added (0.5: indifferent)"
        if decided else "no pair of an answer and its padded restatement was decided in both orders",
    )  # fmt: skip


def reference(pairs: Sequence[Judged]) -> Check:
    """The share of read pairs won by the right answer over its near miss."""
    read = [p for p in pairs if p.kind is PairKind.REFERENCE and p.result.verdict in READ]
    right = sum(1 for p in read if p.result.verdict == "win")
    return _rate(
        CheckName.REFERENCE, right, len(read),
        lambda r: _status_above(r, REFERENCE_PASS, REFERENCE_WARN),
        "pairs won by the right answer over a near miss, the reference shown (a tie or split is not a win)"
        if read else "no task with a reference answer",
    )  # fmt: skip


def self_preference(pairs: Sequence[Judged], other_model: str | None) -> Check:
    """Among decided pairs of the judge's own model's answer and the other model's
    whose answers are equally right (both right or both wrong), the share won by its
    own: 0.5 is no preference."""
    if other_model is None:
        return Check(
            name=CheckName.SELF_PREFERENCE, rate=None, lo=None, hi=None, n=0,
            status=CheckStatus.NOT_MEASURED, note="one model: give a second with --other-model to measure it",
        )  # fmt: skip
    own = [p for p in pairs if p.kind is PairKind.SELF]
    even = [p for p in own if p.first_right == p.second_right and p.result.verdict in ("win", "loss")]
    won = sum(1 for p in even if p.result.verdict == "win")
    mine = sum(1 for p in own if p.first_right)
    theirs = sum(1 for p in own if p.second_right)
    note = (
        f"decided pairs of equally right answers won by the judge's own model (0.5: no preference); "
        f"right: its own {mine}/{len(own)}, {other_model} {theirs}/{len(own)}"
    )
    return _rate(CheckName.SELF_PREFERENCE, won, len(even), _status_lean, note)


def measures(pairs: Sequence[Judged], other_model: str | None) -> list[Check]:
    return [position(pairs), length(pairs), reference(pairs), self_preference(pairs, other_model)]


def overall(checks: Sequence[Check]) -> CheckStatus:
    """The worst status among the measured checks."""
    found = [c.status for c in checks if c.status in ORDER]
    return max(found, key=ORDER.index) if found else CheckStatus.NOT_MEASURED
