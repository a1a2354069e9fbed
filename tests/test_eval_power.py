"""Power before money is spent and in every report: the smallest difference each
comparison can find at 80% power, by simulating the report's own test (Holm over the
planned comparisons), the tasks an effect needs, a budget in dollars turned into the
tasks it fits, and a comparison that is not significant read as what it could not find."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagmca.cli.app import app, main
from dagmca.evaluation import Task
from dagmca.evaluation.power import Discordance, mde, power, tasks_needed
from dagmca.evaluation.stats import sign_flip_test, sign_tests
from tests.support.evals import run, scripted


def _tasks(path: Path, n: int) -> Path:
    lines = [
        json.dumps({"id": f"t{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}) for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _dry(tmp_path: Path, n: int, *extra: str) -> dict[str, object]:
    path = _tasks(tmp_path / f"t{n}.jsonl", n)
    done = CliRunner().invoke(
        app, ["eval", str(path), "--arms", "mca,single", "--llm", "fake", "--dry-run", "--json", *extra]
    )
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow  # two dry runs through the CLI, each simulating thousands of evals
def test_a_dry_run_states_the_smallest_difference_and_more_tasks_lower_it(tmp_path: Path) -> None:
    twenty, forty = _dry(tmp_path, 20), _dry(tmp_path, 40)
    (row,) = twenty["power"]  # type: ignore[misc]
    assert row["kind"] == "accuracy" and row["tasks"] == 20 and row["comparisons"] == 1
    assert 0.25 <= row["mde"] <= 0.45, row
    assert "assumed" in row["basis"]
    assert forty["power"][0]["mde"] < row["mde"]  # type: ignore[index]


def test_the_tasks_named_for_an_effect_have_80_percent_power(tmp_path: Path) -> None:
    (row,) = _dry(tmp_path, 20, "--effect", "0.15")["power"]  # type: ignore[misc]
    needed = row["tasks_needed"]
    assert row["effect"] == 0.15 and needed is not None and needed > 20
    assumed = Discordance.assumed("accuracy")
    found = power("accuracy", assumed, needed, 1, 0.15, simulations=2000, seed=7)  # another draw
    assert abs(found - 0.80) <= 0.05, (needed, found)


def test_the_simulated_test_is_the_reports_and_holds_its_level() -> None:
    rng = random.Random(3)
    for _ in range(50):
        w, lo, ties = rng.randint(0, 30), rng.randint(0, 30), rng.randint(0, 10)
        assert sign_tests([w], [lo])[0] == pytest.approx(
            sign_flip_test([1.0] * w + [-1.0] * lo + [0.0] * ties)
        )
    assumed = Discordance.assumed("judged")
    assert power("judged", assumed, 30, 1, 0.0, simulations=2000) <= 0.06  # no effect: the level, or under
    assert power("judged", assumed, 30, 2, 0.0, 3, simulations=500) <= 0.05
    # at 5 tasks no p reaches 0.05: nothing can be found; Holm over more comparisons needs more
    assert mde("accuracy", Discordance.assumed("accuracy"), 5, 1) is None
    one, six = (tasks_needed("judged", assumed, 1, 0.2, k) for k in (1, 6))
    assert one is not None and six is not None and six > one


def test_an_underpowered_comparison_says_what_it_could_not_find(tmp_path: Path) -> None:
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(5)]
    # one arm right on three tasks, the other on two: far from significant on five tasks
    answers = lambda a, t, r: str(2 * int(t[1:])) if (a == "single") == (int(t[1:]) < 3) else "-1"  # noqa: E731
    report, _ = run(tmp_path, scripted(answers), found, "single,single:temperature=0.5")
    (c,) = report.comparisons
    assert c.p_holm >= 0.05 and c.mde is None  # five tasks: no p under 0.0625
    assert c.reading is not None and c.reading.startswith(
        "no difference of 1.00 or more in accuracy was found"
    )
    assert "none of any size could be" in c.reading


@pytest.mark.slow  # three evals through the CLI
def test_a_budget_in_dollars_runs_the_tasks_it_fits_and_stays_within_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _tasks(tmp_path / "t.jsonl", 12)
    priced = ["--llm", "fake", "--price-per-1k-prompt", "0.5", "--price-per-1k-completion", "1.5"]
    args = ["eval", str(path), "--arms", "single", *priced, "--store", str(tmp_path / "b.db")]
    whole = json.loads(CliRunner().invoke(app, [*args, "--dry-run", "--json"]).stdout)
    budget = whole["cost_usd_max"] / 2  # about half the tasks
    done = CliRunner().invoke(app, [*args, "--budget-usd", f"{budget:.6f}", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert 0 < data["tasks"] < 12
    assert 0 < data["spend"]["total"]["cost_usd"] <= budget
    assert main([*args, "--budget-usd", "0.000001"]) == 2
    assert "not even one task fits" in capsys.readouterr().err


@pytest.mark.slow  # a pilot eval and a dry run through the CLI
def test_a_pilot_measures_the_discordance_the_dry_run_plans_with(tmp_path: Path) -> None:
    path = _tasks(tmp_path / "t.jsonl", 12)
    store = str(tmp_path / "p.db")
    args = ["eval", str(path), "--arms", "single,single:temperature=0.5", "--llm", "fake", "--store", store]
    done = CliRunner().invoke(app, [*args, "--dry-run", "--pilot", "4", "--json"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.stdout)["power"]
    assert row["basis"] == "a pilot of 4 tasks" and row["tasks"] == 12
    assert Path(store).exists()  # the pilot's sessions are stored, for the eval to read back
    refused = CliRunner().invoke(app, [*args, "--pilot", "4"])
    assert refused.exit_code != 0
