"""Self-consistency (Wang et al. 2023), the `vote` arm: N answers sampled from the
single arm's prompt at a temperature above 0, each with its own seed, and the
plurality of the answers as extracted: the normalised text for exact tasks, clusters
within the tolerance for numeric ones, the letter for choice tasks. No call is spent on
voting. N is matched to the debate arm task by task, by tokens (the default) or calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from dagmca.evaluation.pairs import Finished
from dagmca.evaluation.records import RunRecord
from dagmca.evaluation.scoring import DEFAULT_TOLERANCE, normalise, parse_number, pick_choice, score
from dagmca.evaluation.tasks import Task

Match = Literal["tokens", "calls"]
MATCHES: tuple[Match, ...] = ("tokens", "calls")
DEFAULT_TEMPERATURE = 0.7
MAX_SAMPLES = 64  # the most answers one vote samples, whatever its target spent


def samples_for(
    match: Match, target_calls: int, target_tokens: int, first_calls: int, first_tokens: int
) -> int:
    """How many samples spend what the target arm spent on a task, judged from the
    first sample's spend: the nearest whole number, at least 1."""
    want, each = (target_tokens, first_tokens) if match == "tokens" else (target_calls, first_calls)
    if each <= 0:
        return 1
    return max(1, min(MAX_SAMPLES, round(want / each)))


def _key(task: Task, answer: str, tolerance: float) -> str | float | int | None:
    """What two answers must share to count as one: the letter, the number, the text."""
    if task.rule == "choice" and task.choices:
        return pick_choice(answer, task.choices)
    if task.rule == "numeric" or (
        task.rule == "exact" and parse_number(answer) is not None and _numeric(task)
    ):
        return parse_number(answer)
    text = normalise(answer)
    return text or None


def _numeric(task: Task) -> bool:
    return task.answer is not None and parse_number(str(task.answer)) is not None


def plurality(task: Task, answers: Sequence[str | None], tolerance: float = DEFAULT_TOLERANCE) -> int | None:
    """The index of the answer the most samples agree with (numbers agree within
    `tolerance`, relative); the earliest on a tie. None when no answer can be read."""
    keys = [(_key(task, a, tolerance) if a else None) for a in answers]
    best, best_count = None, 0
    for i, k in enumerate(keys):
        if k is None:
            continue
        count = sum(1 for other in keys if other is not None and _agree(k, other, tolerance))
        if count > best_count:
            best, best_count = i, count
    return best


def _agree(a: str | float | int, b: str | float | int, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= tolerance * max(abs(a), abs(b))
    return a == b


def voted(arm: str, task: Task, repeat: int, samples: Sequence[Finished], tolerance: float) -> Finished:
    """The vote's record on (task, repeat): the plurality sample's answer and final text
    (for an open task, the final of the sample whose short answer most others share),
    every sample's spend summed, and the chosen sample's session as its own (its final
    is the one judged)."""
    records = [s.record for s in samples]
    pick = plurality(task, [r.answer for r in records], tolerance)
    chosen = samples[pick] if pick is not None else samples[0]
    answer = chosen.record.answer if pick is not None else None
    record = RunRecord(
        arm=arm, protocol="self-consistency", task=task.id, repeat=repeat, session=chosen.record.session,
        status=chosen.record.status, answer=answer, score=score(task, answer, tolerance),
        calls=sum(r.calls for r in records), tokens=sum(r.tokens for r in records),
        cost_usd=sum(r.cost_usd for r in records), samples=len(records),
        prompt_tokens=sum(r.prompt_tokens for r in records),
    )  # fmt: skip
    return Finished(record, chosen.final_text)
