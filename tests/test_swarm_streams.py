"""The shipped streams: every one loads, and every code task's reference solution
passes its tests in the executor (and a wrong one fails them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmca.executor import Limits, check
from dagmca.swarm.tasks import extract_code, load_stream, score_reference

STREAMS = Path(__file__).parents[1] / "examples" / "swarm"


@pytest.mark.parametrize("name", ["arithmetic", "units", "code", "mixed"])
def test_each_shipped_stream_loads(name: str) -> None:
    tasks = load_stream(STREAMS / f"{name}.jsonl")
    assert len({t.type for t in tasks}) >= (1 if name != "mixed" else 6)


@pytest.mark.slow  # 24 executor runs
def test_every_reference_solution_passes_its_tests_in_the_executor() -> None:
    tasks = [t for t in load_stream(STREAMS / "code.jsonl") if t.is_code]
    assert {t.type for t in tasks} == {"string", "list", "math", "logic"}
    for task in tasks:
        assert task.solution is not None
        code = extract_code(f"```python\n{task.solution}```")
        outcome = check(code, task.test_code(), task.entry_point, Limits())
        assert outcome.passed, (task.id, outcome.reason, outcome.output)
        wrong = check(
            f"def {task.entry_point}(*args):\n    return None\n", task.test_code(), task.entry_point
        )
        assert not wrong.passed, task.id


def test_reference_tasks_are_scored_as_eval_scores_them() -> None:
    task = load_stream(STREAMS / "units.jsonl")[0]
    assert score_reference(task, f"That is {task.answer} in all.\nAnswer: {task.answer}")
    assert not score_reference(task, "Answer: 1")
    worked = f"3 times 4 is 12, so:\nAnswer: {task.answer}"
    assert score_reference(task, worked) and not score_reference(
        task, f"{task.answer} first, then\nAnswer: 1"
    )
