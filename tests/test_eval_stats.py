"""The statistics of an eval on the unit that was sampled, the task: judge trials
combined first, a sign-flip test over the tasks' scores, intervals bootstrapped over
tasks, unread pairs apart and never ties in every row alike, and a noise floor that
runs the same test. Calibration is checked on synthetic records, built as an eval of
scripted arms would build them, so that 200 evals take a second, not an hour."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from dagmca.evaluation.judging import PairJudgement
from dagmca.evaluation.noise import noise_floor
from dagmca.evaluation.records import RunRecord, Verdict
from dagmca.evaluation.report import arm_row, comparisons
from dagmca.evaluation.scoring import Score
from dagmca.evaluation.stats import sign_flip_test, sign_test, task_interval
from dagmca.llm.base import LLMError
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from tests.support.evals import open_tasks, run, scripted


def _record(arm: str, task: str, repeat: int, correct: bool) -> RunRecord:
    return RunRecord(
        arm=arm, protocol="mca", task=task, repeat=repeat, session=f"{arm}-{task}-{repeat}", status="done",
        answer="x", score=Score(correct), calls=3, tokens=30, cost_usd=0.01,
    )  # fmt: skip


def _one_eval(
    rng: random.Random, tasks: int = 20, repeats: int = 3, trials: int = 3
) -> tuple[list[RunRecord], list[Verdict]]:
    """Two identical arms: each task has its own chance of a right answer, the same for
    both; the judge (at temperature 0) repeats its verdict in every trial."""
    runs: list[RunRecord] = []
    verdicts: list[Verdict] = []
    for t in range(tasks):
        p = rng.uniform(0.05, 0.95)
        for r in range(repeats):
            a, b = rng.random() < p, rng.random() < p
            runs += [_record("a", f"t{t}", r, a), _record("b", f"t{t}", r, b)]
            verdict = "win" if a and not b else "loss" if b and not a else "tie"
            verdicts += [Verdict("a", "b", f"t{t}", r, verdict, trial=k) for k in range(trials)]  # type: ignore[arg-type]
    return runs, verdicts


@pytest.mark.slow
def test_calibrated_two_identical_arms_over_200_evals() -> None:
    rng = random.Random(7)
    significant = covered = 0
    for i in range(200):
        runs, verdicts = _one_eval(rng)
        found = comparisons(["a", "b"], runs, verdicts, seed=i)
        assert [c.kind for c in found] == ["accuracy", "judged"]
        significant += any(c.p_holm < 0.05 for c in found)
        acc = arm_row("a", [r for r in runs if r.arm == "a"], 20, seed=i).accuracy
        assert acc is not None
        covered += acc.lo <= 0.5 <= acc.hi  # the tasks' chances average 0.5
    assert significant <= 0.07 * 200, significant
    assert covered >= 0.92 * 200, covered


def test_the_sign_flip_test_is_the_sign_test_with_one_repeat_and_counts_tasks_not_repeats() -> None:
    assert sign_flip_test([1.0] * 8 + [-1.0] * 3 + [0.0] * 9) == pytest.approx(sign_test(8, 3))
    # 20 tasks, 8 won, 3 lost, 9 tied, judged in 3 trials: tested on tasks, not on 24/9/27
    runs: list[RunRecord] = []
    kinds = ["win"] * 8 + ["loss"] * 3 + ["tie"] * 9
    verdicts = [Verdict("a", "b", f"t{i}", 0, k, trial=j) for i, k in enumerate(kinds) for j in range(3)]  # type: ignore[arg-type]
    (c,) = comparisons(["a", "b"], runs, verdicts)
    assert (c.wins, c.losses, c.ties, c.tasks) == (8, 3, 9, 20)
    assert c.p_value == pytest.approx(0.2265625) and c.lo < 0.5 < c.hi


def test_few_tasks_take_the_wider_of_the_bootstrap_and_wilson_and_say_so() -> None:
    lo, hi, few = task_interval([(1.0, 1.0)] * 5)
    assert few and lo < 0.6 and hi == 1.0  # 5 of 5 is not [1, 1]


def test_the_noise_floor_runs_every_pair_of_repeats_through_the_same_test() -> None:
    runs = [_record("a", f"t{t}", r, (t + r) % 2 == 0) for t in range(6) for r in range(3)]
    floor = noise_floor("a", runs, [])
    assert floor is not None and floor.kind == "accuracy" and floor.pairs == 3
    assert floor.wins + floor.losses + floor.ties == 6 * 3 and 0 <= floor.p_value <= 1


def test_capped_log10_error_counts_every_numeric_answer() -> None:
    scored = Score(True, log10_error=0.1, numeric=True)
    missing = Score(False, parsed=False, numeric=True)
    runs = [
        RunRecord(arm="a", protocol="mca", task=f"t{i}", repeat=0, session=f"s{i}", status="done",
                  answer=None, score=s, calls=1, tokens=1, cost_usd=0.0)
        for i, s in enumerate([scored, missing])
    ]  # fmt: skip
    row = arm_row("a", runs, 4)
    assert row.log10_error is not None and (row.log10_error.scored, row.log10_error.capped) == (1, 1)
    assert row.log10_error.mean == pytest.approx((0.1 + 3.0) / 2) and row.coverage == 0.5


def test_no_silent_ties_a_reply_failing_validation_in_one_order_is_no_verdict_in_every_row(
    tmp_path: Path,
) -> None:
    def respond(call: ScriptedCall) -> Any:
        if call.schema is PairJudgement:
            user = call.messages[-1]["content"]
            if "fact 1?" in user and call.meta.agent.startswith("judge-yx"):
                raise LLMError("reply does not fit PairJudgement after repair", invalid_output=True)
            crit = [{"criterion": c, "reasoning": f"on {c} the answers differ in length", "verdict": "tie"}
                    for c in ("insight", "clarity")]  # fmt: skip
            return {
                "criteria": crit,
                "reasoning": "they say the same thing at equal length",
                "verdict": "tie",
            }
        return base.responder(call)

    base = scripted(lambda a, t, r: "x")
    report, _ = run(tmp_path, ScriptedLLM(respond), open_tasks(4), "single,mca:rounds=1")
    (overall,) = report.comparisons
    rows = [overall, *report.criteria]
    assert len(rows) == 3
    for row in rows:  # the same pairs behind every row, the unread one apart
        assert (row.wins, row.losses, row.ties, row.no_verdict) == (0, 0, 3, 1), row
    assert report.no_verdict == 1


def test_tasks_all_alike_are_no_certainty_whatever_their_number() -> None:
    lo, hi, few = task_interval([(1.0, 1.0)] * 40)
    assert not few and 0.85 < lo < 1.0 and hi == 1.0


def test_the_sign_flip_test_takes_a_thousand_tasks_and_more() -> None:
    from dagmca.evaluation.stats import EXACT_SIGN_FLIPS, sign_flip_test

    # 2^T overflowed a float from 1024 tasks of nonzero d_t on
    assert 0.0 <= sign_flip_test([1.0] * 1100) < 1e-100
    assert sign_flip_test([1.0, -1.0] * 600) == 1.0
    # above the exact count, the normal approximation agrees with it where both apply
    rng = random.Random(3)
    d = [rng.choice([1 / 6, 1 / 2, 5 / 6, 1.0, -1 / 6, -1 / 2, -5 / 6]) for _ in range(EXACT_SIGN_FLIPS)]
    exact = sign_flip_test(d)
    approx = sign_flip_test([*d, 1.0, -1.0])  # one pair more: past the exact count, the same sum
    assert abs(exact - approx) < 0.01 * max(exact, 0.05)
