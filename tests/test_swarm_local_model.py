"""A real model: the bundled SmolLM2 runs 20 tasks of a shipped stream (16 reference
tasks and 4 code tasks, in the stream's order) end to end through `dagmca swarm`
(reference tasks scored, code tasks run in the executor).
Asserts structure, not accuracy: a 135M model solves few of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import dagmca

pytestmark = pytest.mark.local_model
STREAM = Path(__file__).parents[1] / "examples" / "swarm" / "mixed.jsonl"


def test_the_bundled_model_runs_twenty_tasks_of_a_shipped_stream(tmp_path: Path) -> None:
    lines = STREAM.read_text(encoding="utf-8").splitlines()
    code = [line for line in lines if json.loads(line).get("check") == "code"][:4]
    other = [line for line in lines if line not in code][:16]
    tasks = tmp_path / "twenty.jsonl"
    chosen = [line for line in lines if line in code or line in other]
    tasks.write_text("".join(f"{line}\n" for line in chosen), encoding="utf-8")
    args = ["swarm", str(tasks), "--agents", "3", "--router", "affinity", "--snapshot-every", "10", "--json"]
    run = dagmca(*args, "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["tasks"] == 20 and report["attempted_now"] == 20
    assert len(report["curves"][0]["seen"]) == 2
    checked = dagmca("check", report["swarm_id"], cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    again = json.loads(dagmca(*args, cwd=tmp_path, timeout=600).stdout)
    assert again["attempted_now"] == 0
