"""What an evaluation's report warns about beside its numbers: the judge's verdicts
moving with the order of the answers, a judged win that may be length, a judge
grading its own model, and ledger shares with no control to read them against. Each
is a typed notice (its kind, the arms it is about and one line to print), so a reader
of the JSON can act on the kind and a later notice is one more kind."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from dagmca.graph.schema import Strict

# above this share of judged pairs whose two orders disagreed, the judge's verdicts say
# more about the order the answers were shown in than about the answers: MT-Bench (Zheng
# et al. 2023) found GPT-4 consistent on 65% of swapped pairs, weaker judges much less
ORDER_SPLIT_WARN = 0.20
SIGNIFICANT = 0.05


class NoticeKind(StrEnum):
    ORDER_SPLITS = "order_splits"  # many judged pairs split with the order: counted as ties
    MAY_BE_LENGTH = "may_be_length"  # significant raw, not once length is controlled
    SELF_PREFERENCE = "self_preference"  # the judge is an arm's model
    NOT_SCORED = "not_scored"  # an arm with nothing to compare on some tasks (first-vote on open ones)
    NO_CONTROL = "no_control"  # an arm's ledger shares with no single arm to trace as their control


class Notice(Strict):
    kind: NoticeKind
    arms: list[str]
    message: str


def order_splits(arm: str, baseline: str, splits: int, rate: float | None) -> Notice | None:
    if rate is None or rate <= ORDER_SPLIT_WARN:
        return None
    return Notice(
        kind=NoticeKind.ORDER_SPLITS,
        arms=[arm, baseline],
        message=f"{arm} vs {baseline}: {splits} judged pairs ({rate:.0%}) changed verdict with the order the "
        f"answers were shown in, and count as ties: the judge reads position more than content "
        f"(above {ORDER_SPLIT_WARN:.0%}); check it with `dagmca judge-check`, or judge with another "
        "model (--judge-model)",
    )


def may_be_length(
    arm: str, baseline: str, p_holm: float, lc: float | None, lo: float | None, hi: float | None
) -> Notice | None:
    """A raw judged difference that is significant while the length-controlled win rate's
    interval holds 0.5."""
    if p_holm >= SIGNIFICANT or lc is None or lo is None or hi is None or not lo <= 0.5 <= hi:
        return None
    return Notice(
        kind=NoticeKind.MAY_BE_LENGTH,
        arms=[arm, baseline],
        message=f"{arm} vs {baseline}: the judged difference may be length: significant as judged (p Holm "
        f"{p_holm:.3g}), but at equal length the win rate would be {lc:.2f} [{lo:.2f}, {hi:.2f}], which "
        "holds 0.5",
    )


def not_scored(arm: str, tasks: int) -> Notice | None:
    """A derived arm (first-vote) on `tasks` judged tasks: it has short answers and no
    final text, so it is in no judged comparison there."""
    if tasks == 0:
        return None
    return Notice(
        kind=NoticeKind.NOT_SCORED,
        arms=[arm],
        message=f"{arm}: left out of {tasks} open tasks: it is the plurality of short answers, scored "
        "against a reference, and a judged pair compares final texts, which it has none of",
    )


def self_preference(judge: str, arms: Sequence[str]) -> Notice | None:
    """The judge is the model of `arms` (none: no notice)."""
    if not arms:
        return None
    return Notice(
        kind=NoticeKind.SELF_PREFERENCE,
        arms=list(arms),
        message=f"the judge ({judge}) is the model of {', '.join(arms)}: models rate their own answers "
        "higher (self-preference, Panickssery et al. 2024); judge with another model (--judge-model)",
    )


def no_control(arms: Sequence[str]) -> Notice | None:
    """Traced `arms` in an eval with no `single` arm: their shares have nothing to be
    read against (none: no notice)."""
    if not arms:
        return None
    named = ", ".join(arms)
    return Notice(
        kind=NoticeKind.NO_CONTROL,
        arms=list(arms),
        message=f"{named}: the ledger's shares have no control: without the single arm no lone agent's "
        "answer is traced against the same sources, so nothing says what share the procedure gives by "
        "chance (add single to --arms)",
    )
