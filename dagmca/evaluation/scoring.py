"""Scoring a task's answer: the task's rule and reference handed to the scorer that
`metrics --reference` and a debate's answer tallies read answers with too
(dagmca.scoring), so a flip there is a flip here."""

from __future__ import annotations

from dagmca.evaluation.tasks import Task
from dagmca.scoring import DEFAULT_TOLERANCE, Score, score_answer

# what a task's score is, and the tolerance it is scored within, as eval's modules name them
__all__ = ["DEFAULT_TOLERANCE", "Score", "score"]


def score(task: Task, answer: str | None, tolerance: float = DEFAULT_TOLERANCE) -> Score:
    """`answer` under `task`'s rule. No answer (the session could not give a short
    one): wrong, and a parse failure."""
    if task.judged:
        return Score(None, parsed=answer is not None and bool(answer.strip()))
    reference = task.answer
    assert reference is not None  # the task's validator requires one when not judged
    rule = task.rule
    assert rule != "judge"
    return score_answer(answer, str(reference), rule, task.choices, tolerance)
