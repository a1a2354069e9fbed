"""The dry run projects each arm by its own rule and brackets what the eval then spends:
the debate's sessions, the vote's samples as --match sizes them (by tokens or by calls),
first-vote's reads of its source's first-round answers; and says how long it would take."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmca.config import SessionConfig
from dagmca.evaluation import Task, parse_arms
from dagmca.evaluation.estimate import EvalProjection, project_eval, time_ranges
from tests.support.evals import BASE, run, scripted

ARMS = "mca,vote,single,first-vote"


def _tasks() -> list[Task]:
    scored = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(3)]
    return [*scored, Task(id="t9", question="What follows from the fact?", passage="A fact stated.")]


@pytest.mark.parametrize("match", ["tokens", "calls"])
def test_the_projected_calls_bracket_the_calls_made_for_every_arm(tmp_path: Path, match: str) -> None:
    found = _tasks()
    projected = project_eval(found, parse_arms(ARMS, BASE.model_dump()), BASE, match=match)  # type: ignore[arg-type]
    report, _ = run(
        tmp_path,
        scripted(lambda a, t, r: "0", lambda c: {"reasoning": "the same, said twice", "verdict": "tie"}),
        found,
        ARMS,
        match=match,
    )
    made = {a.arm: a.calls for a in report.arms}
    for row in projected.arms:
        assert row.calls_min <= made[row.arm] <= row.calls_max, (match, row, made[row.arm])
    assert report.spend is not None
    judge = report.spend.judge.calls
    assert (
        projected.calls_min <= report.spend.total.calls - judge + projected.judge_calls <= projected.calls_max
    )
    assert next(r for r in projected.arms if r.arm == "vote").rule == f"samples matched by {match}"


def test_a_dry_run_says_how_long_on_the_bundled_model_and_on_a_measured_endpoint() -> None:
    p = EvalProjection(
        arms=[], judge_calls=0, calls_min=100, calls_max=200, cost_usd_min=0.0, cost_usd_max=0.0
    )
    local = SessionConfig.model_validate({"llm": "local"})
    (bundled,) = time_ranges(p, local, None, 1)
    assert bundled.where == "bundled model" and 100 * 4 < bundled.seconds_min < bundled.seconds_max < 200 * 10
    endpoint = SessionConfig.model_validate(
        {"llm": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "concurrency": 8}
    )
    (measured,) = time_ranges(p, endpoint, 0.5, 4)
    assert (measured.seconds_min, measured.seconds_max) == (100 * 0.5 / 8, 200 * 0.5 / 4)
    assert time_ranges(p, endpoint, None, 4) == []  # no latency measured: said as a note, not guessed
