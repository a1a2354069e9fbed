"""A question session's answers: how often the agents changed their answer, round by
round, and with a reference answer, how many changes went from right to wrong and
from wrong to right (debate that talks agents out of right answers shows here); and
how often a lateral turn's stance line says the opposite of what its answer did.

Answers are read by the scorer an evaluation reads them with (dagmca.scoring, under
the task's rule), so "B) Paris" against "B", or "The answer is 42" against "42", is
the same answer here as there, and a flip here is a flip in `eval`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from dagmca.graph import Phase, RoundNode, Strict, TurnNode
from dagmca.scoring import DEFAULT_TOLERANCE, Rule, same_answer, score_answer

_PHASE_ORDER = {Phase.RESPOND: 0, Phase.LATERAL: 1}


class Reading(Strict):
    """How answers are read: the rule of the task (`exact`, `numeric`, `choice`), its
    choices and its tolerance, as `eval` scores the task's answers."""

    rule: Rule = "exact"
    choices: list[str] | None = None
    tolerance: float = DEFAULT_TOLERANCE

    def same(self, a: str, b: str) -> bool:
        return same_answer(a, b, self.rule, self.choices, self.tolerance)

    def right(self, answer: str, reference: str) -> bool:
        return bool(score_answer(answer, reference, self.rule, self.choices, self.tolerance).correct)


class RoundAnswers(Strict):
    round: int
    # each leaf's last answer of the round, those the scorer reads as one answer
    # together (under the first one given)
    tally: dict[str, int]
    changes: int  # turns whose answer differs from the same agent's answer before
    right_to_wrong: int | None = None  # with a reference
    wrong_to_right: int | None = None


class AnswerMetrics(Strict):
    debate: str
    reference: str | None
    rounds: list[RoundAnswers]
    changes: int
    right_to_wrong: int | None = None
    wrong_to_right: int | None = None
    stances: dict[str, int]  # lateral stance lines: kept, revised, changed (and none)
    # lateral turns whose stance says `kept` while their answer changed, or `changed`
    # while it did not (a `revised` stance may go either way)
    stance_mismatch: int = 0
    rule: Rule = "exact"  # how answers were read (the task's scoring rule)


def is_right(value: str, reference: str, reading: Reading | None = None) -> bool:
    """An answer is right when the scorer scores it right against the reference."""
    return (reading or Reading()).right(value, reference)


def tally(answers: Sequence[str], reading: Reading) -> dict[str, int]:
    """How many gave each answer, answers the scorer reads as one counted together under
    the first given; most given first."""
    counts: dict[str, int] = {}
    for a in answers:
        key = next((k for k in counts if reading.same(k, a)), a)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def answer_metrics(
    debate: str,
    turns: Sequence[TurnNode],
    rounds: Sequence[RoundNode],
    reference: str | None = None,
    reading: Reading | None = None,
) -> AnswerMetrics | None:
    """The answer changes of one debate, in turn order (None: no turn gave an answer)."""
    reading = reading or Reading()
    answered = sorted(
        (t for t in turns if t.answer and t.phase in _PHASE_ORDER),
        key=lambda t: (t.round, _PHASE_ORDER[t.phase], t.agent),
    )
    if not answered:
        return None
    last: dict[str, str] = {}
    of_round: dict[int, dict[str, str]] = defaultdict(dict)
    changes: Counter[int] = Counter()
    flips: dict[int, Counter[str]] = defaultdict(Counter)
    mismatch = 0
    for t in answered:
        assert t.answer is not None
        before = last.get(t.agent)
        last[t.agent] = of_round[t.round][t.agent] = t.answer
        if before is None:
            continue
        changed = not reading.same(before, t.answer)
        if t.phase is Phase.LATERAL and (t.stance, changed) in (("kept", True), ("changed", False)):
            mismatch += 1
        if not changed:
            continue
        changes[t.round] += 1
        if reference is not None:
            was, now = reading.right(before, reference), reading.right(t.answer, reference)
            if was and not now:
                flips[t.round]["right_to_wrong"] += 1
            elif now and not was:
                flips[t.round]["wrong_to_right"] += 1
    numbers = sorted({t.round for t in answered} | {r.number for r in rounds if r.answers})
    per_round = [
        RoundAnswers(
            round=n,
            tally=tally(list(of_round[n].values()), reading),
            changes=changes[n],
            right_to_wrong=flips[n]["right_to_wrong"] if reference is not None else None,
            wrong_to_right=flips[n]["wrong_to_right"] if reference is not None else None,
        )
        for n in numbers
    ]
    stances = Counter(t.stance or "none" for t in turns if t.phase is Phase.LATERAL)
    total = sum(flips.values(), Counter())
    return AnswerMetrics(
        debate=debate,
        reference=reference,
        rounds=per_round,
        changes=sum(changes.values()),
        right_to_wrong=total["right_to_wrong"] if reference is not None else None,
        wrong_to_right=total["wrong_to_right"] if reference is not None else None,
        stances=dict(sorted(stances.items())),
        stance_mismatch=mismatch,
        rule=reading.rule,
    )
