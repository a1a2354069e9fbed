"""`dagmca eval` on the real local model (SmolLM2 via xllamacpp): three of the shipped
arithmetic tasks, a single agent against the smallest tree that still debates, judged in
pairs by the same model. Asserts that it completes and what the report holds, not how
well a 135M model does arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmca.llm.local import LOCAL_MODEL_NAME
from tests.support.cli import dagmca

pytestmark = pytest.mark.local_model

ARITHMETIC = Path(__file__).parent.parent / "examples" / "eval" / "arithmetic.jsonl"


def test_an_eval_on_the_real_model_scores_every_arm_and_judges_the_pair(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = ARITHMETIC.read_text(encoding="utf-8").splitlines()[:3]
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # mca: a root and two leaves, one round, the main debate only (the local model's
    # defaults already leave out signals and the strange loop); --judge-all: the
    # reference tasks are judged in pairs too, in both orders, by the local model
    shape = ["--cpp", "2", "--depth", "2", "--rounds", "1", "--max-depth", "0"]
    proc = dagmca(
        "eval", str(tasks), "--llm", "local", "--arms", "single,mca", *shape, "--judge-all", "--json",
        cwd=tmp_path, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert [a["arm"] for a in report["arms"]] == ["single", "mca"]
    for arm in report["arms"]:
        acc = arm["accuracy"]
        assert acc is not None, arm
        assert acc["scored"] == 3 and 0 <= acc["correct"] <= 3
        # an answer that does not parse is wrong and counted, never dropped
        assert 0 <= acc["parse_failures"] <= 3 - acc["correct"]
        assert 0.0 <= acc["lo"] <= acc["value"] <= acc["hi"] <= 1.0
        assert acc["value"] == pytest.approx(acc["correct"] / 3)
        assert arm["sessions"] == 3 and arm["calls"] >= 3 * 3
    by_kind = {c["kind"]: c for c in report["comparisons"]}
    judged = by_kind["judged"]
    assert {judged["arm"], judged["baseline"]} == {"single", "mca"}
    assert judged["wins"] + judged["losses"] + judged["ties"] == 3
    assert 0.0 <= judged["lo"] <= judged["win_rate"] <= judged["hi"] <= 1.0
    assert "accuracy" in by_kind
    assert report["judge"]["model"] == LOCAL_MODEL_NAME and report["judge"]["orders"] == 2
    assert report["spend"]["judge"]["calls"] >= 1
