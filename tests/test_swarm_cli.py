"""`dagmca swarm` as a user runs it: bad input is one line and exit 2 before any call
or store; a dry run spends nothing; a run on the fake model is recorded, `dagmca check`
holds on it, and the same command run again makes no call."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagmca.cli.app import app
from tests.support.cli import assert_user_error, dagmca

GOOD = [
    {"id": "a1", "type": "add", "question": "What is 2 + 3?", "answer": "5"},
    {"id": "m1", "type": "mul", "question": "What is 2 * 3?", "answer": "6"},
    {"id": "a2", "type": "add", "question": "What is 4 + 4?", "answer": "8"},
]


def _stream(tmp_path: Path, tasks: list[dict[str, object]]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("tasks", "args", "says"),
    [
        ([{"id": "a", "type": "m", "question": "q"}], [], "needs tests (code) or an answer"),
        ([GOOD[0], GOOD[0]], [], "duplicate id 'a1'"),
        ([{**GOOD[0], "check": "essay"}], [], "unknown check 'essay'"),
        (GOOD, ["--router", "affinity,smart"], "unknown router 'smart'"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, tasks: list[dict[str, object]], args: list[str], says: str
) -> None:
    path = _stream(tmp_path, tasks)
    assert_user_error(dagmca("swarm", str(path), "--llm", "fake", *args, cwd=tmp_path), says, tmp_path)


@pytest.mark.slow  # three dagmca processes
def test_dry_run_then_run_then_rerun(tmp_path: Path) -> None:
    path = _stream(tmp_path, GOOD)
    dry = dagmca(
        "swarm", str(path), "--llm", "fake", "--dry-run", "--json", "--router", "random,ucb", cwd=tmp_path
    )
    assert dry.returncode == 0, dry.stderr
    projected = json.loads(dry.stdout)
    assert projected["calls"] == 6 and projected["executor_runs"] == 0
    assert projected["prompt_tokens_max"] > 6 * 1500 and projected["cost_usd_max"] == 0.0
    assert not (tmp_path / ".dagmca").exists()
    args = [
        "swarm",
        str(path),
        "--llm",
        "fake",
        "--router",
        "random,ucb",
        "--json",
        "--out",
        str(tmp_path / "o"),
    ]
    first = dagmca(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["attempted_now"] == 6 and [r["router"] for r in report["routers"]] == ["random", "ucb"]
    assert (tmp_path / "o" / "swarm.json").exists()
    if importlib.util.find_spec("matplotlib") is not None:
        assert {p.name for p in (tmp_path / "o").iterdir()} >= {"swarm-curves.png", "swarm-affinity.png"}
    checked = dagmca("check", report["swarm_id"], cwd=tmp_path)
    assert checked.returncode == 0 and "every invariant holds" in checked.stdout, (
        checked.stdout + checked.stderr
    )
    query = (
        "MATCH (p:Persona)-[a:ATTEMPTED]->(t:Task) WHERE a.swarm = $swarm "
        "RETURN t.type AS type, count(a) AS attempts ORDER BY type"
    )
    rows = dagmca("query", query, "--param", f"swarm={report['swarm_id']}", "--json", cwd=tmp_path)
    assert json.loads(rows.stdout) == [{"type": "add", "attempts": 4}, {"type": "mul", "attempts": 2}], (
        rows.stderr
    )
    exported = dagmca(
        "export", "--all", "--format", "graphml", "-o", str(tmp_path / "g.graphml"), cwd=tmp_path
    )
    assert exported.returncode == 0, exported.stderr
    assert "ATTEMPTED" in (tmp_path / "g.graphml").read_text(encoding="utf-8")
    again = json.loads(dagmca(*args, cwd=tmp_path).stdout)
    assert again["attempted_now"] == 0
    assert again["routers"] == report["routers"]


def test_the_python_api_runs_and_reads_back_a_swarm(tmp_path: Path) -> None:
    from dagmca.api import SwarmOptions, SwarmReport, swarm

    path = _stream(tmp_path, GOOD)
    seen: list[object] = []
    report = swarm(
        path, store=tmp_path / "s.db", options={"router": "greedy"}, llm="fake", on_attempt=seen.append
    )
    assert isinstance(report, SwarmReport) and report.attempted_now == 3 and len(seen) == 3
    again = swarm(path, store=tmp_path / "s.db", options=SwarmOptions(router="greedy"), llm="fake")
    assert again.attempted_now == 0 and again.routers == report.routers


def test_a_spent_budget_stops_the_swarm_and_a_rerun_with_a_raised_one_finishes_it(tmp_path: Path) -> None:
    path = _stream(tmp_path, [{**GOOD[i % 3], "id": f"t{i}"} for i in range(12)])
    args = ["swarm", str(path), "--llm", "fake", "--router", "greedy", "--json"]
    cut = dagmca(*args, "--max-llm-calls", "4", cwd=tmp_path)
    assert cut.returncode == 0, cut.stderr
    first = json.loads(cut.stdout)
    assert first["unmade"] > 0 and first["attempted_now"] + first["unmade"] == 12
    assert "the budget is spent" in cut.stderr and "Traceback" not in cut.stderr
    same = json.loads(dagmca(*args, "--max-llm-calls", "4", cwd=tmp_path).stdout)
    assert same["attempted_now"] == 0  # the earlier run's calls count against the swarm's budget
    done = json.loads(dagmca(*args, "--max-llm-calls", "100", cwd=tmp_path).stdout)
    assert done["attempted_now"] == first["unmade"] and done["unmade"] == 0


def _dry_id(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    path = _stream(tmp_path, GOOD)
    ran = CliRunner().invoke(
        app, ["swarm", str(path), "--llm", "fake", "--dry-run", "--json", *args], env=env
    )
    assert ran.exit_code == 0, ran.output
    return str(json.loads(ran.output)["swarm_id"])


def test_the_router_temperature_is_the_setting_with_its_one_default_and_its_variable(tmp_path: Path) -> None:
    """One setting of that name: the swarm reads `router_temperature` as a debate does,
    from its flag, DAGMCA_ROUTER_TEMPERATURE or a file, with the setting's one default."""
    from dagmca.config import SessionConfig
    from dagmca.debate.router import Router
    from dagmca.swarm.loop import StreamPlan

    default = SessionConfig().router_temperature
    assert Router("affinity", ["a"]).temperature == default
    assert StreamPlan(swarm_id="s", tasks=[], agents=[], routers=[]).temperature == default
    plain = _dry_id(tmp_path)
    assert _dry_id(tmp_path, "--router-temperature", str(default)) == plain
    by_flag = _dry_id(tmp_path, "--router-temperature", "0.3")
    assert by_flag != plain  # the temperature is part of what the swarm runs
    assert _dry_id(tmp_path, env={"DAGMCA_ROUTER_TEMPERATURE": "0.3"}) == by_flag


def test_swarm_help_shows_only_the_options_the_swarm_uses() -> None:
    shown = CliRunner().invoke(app, ["swarm", "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    for used in (
        "--router-temperature",
        "DAGMCA_ROUTER_TEMPERATURE",
        "--max-llm-calls",
        "--model",
        "--embedder",
    ):
        assert used in text, used
    for debate_only in (
        "--rounds",
        "--observers",
        "--max-branches",
        "--ledger",
        "--cpp",
        "--max-turn-tokens",
    ):
        assert debate_only not in text, debate_only
    assert len(shown.output.splitlines()) < 200
    refused = CliRunner().invoke(app, ["swarm", "t.jsonl", "--rounds", "2"])
    assert refused.exit_code == 2 and "No such option" in refused.output
