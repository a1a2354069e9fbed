"""A question session's answers: how often the agents changed their answer, round by
round, and with a reference answer, how many changes went from right to wrong and
from wrong to right (debate that talks agents out of right answers shows here)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence

from dagmca.graph import Phase, RoundNode, Strict, TurnNode
from dagmca.text import answer_key

_PHASE_ORDER = {Phase.RESPOND: 0, Phase.LATERAL: 1}


class RoundAnswers(Strict):
    round: int
    tally: dict[str, int]  # the round's stored tally: each leaf's last answer
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


def is_right(value: str, reference: str) -> bool:
    """An answer matches the reference once case, spacing and closing punctuation are
    set aside; a reference that is a number matches the same number."""
    a, r = answer_key(value), answer_key(reference)
    if a == r:
        return True
    try:
        return float(a.replace(",", "")) == float(r.replace(",", ""))
    except ValueError:
        return False


def answer_metrics(
    debate: str, turns: Sequence[TurnNode], rounds: Sequence[RoundNode], reference: str | None = None
) -> AnswerMetrics | None:
    """The answer changes of one debate, in turn order (None: no turn gave an answer)."""
    answered = sorted(
        (t for t in turns if t.answer and t.phase in _PHASE_ORDER),
        key=lambda t: (t.round, _PHASE_ORDER[t.phase], t.agent),
    )
    if not answered:
        return None
    last: dict[str, str] = {}
    changes: Counter[int] = Counter()
    flips: dict[int, Counter[str]] = defaultdict(Counter)
    for t in answered:
        assert t.answer is not None
        before = last.get(t.agent)
        last[t.agent] = t.answer
        if before is None or answer_key(before) == answer_key(t.answer):
            continue
        changes[t.round] += 1
        if reference is not None:
            was, now = is_right(before, reference), is_right(t.answer, reference)
            if was and not now:
                flips[t.round]["right_to_wrong"] += 1
            elif now and not was:
                flips[t.round]["wrong_to_right"] += 1
    tallies = {r.number: json.loads(r.answers) for r in rounds if r.answers}
    numbers = sorted({t.round for t in answered} | set(tallies))
    per_round = [
        RoundAnswers(
            round=n,
            tally=tallies.get(n, {}),
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
    )
