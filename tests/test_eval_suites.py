"""Generated suites with answers a program worked out, shipped in examples/eval/ and
checked again by each suite's own checker; `--suite` and `--list-suites`; the task set's
identity in every result file; `--compare` of result files of one task set, and the
refusal of two; the report as one self-contained page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagmca.cli.app import app, main
from dagmca.evaluation import load_tasks
from dagmca.evaluation.suites import SUITES, generate, jsonl, load_suite, parse
from dagmca.evaluation.suites.logic import solutions

SHIPPED = Path(__file__).resolve().parent.parent / "examples" / "eval"


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_shipped_suite_is_40_tasks_as_generated_each_answer_checked(name: str) -> None:
    shipped = (SHIPPED / f"{name}.jsonl").read_text(encoding="utf-8")
    made = generate(name)
    assert len(made) == 40 and len(load_tasks(SHIPPED / f"{name}.jsonl")) == 40
    # the script's run and this one, of one seed: byte for byte
    assert jsonl([m.task for m in made]) == shipped
    assert all(SUITES[name].check(m) for m in made)
    assert len({m.task.id for m in made}) == 40
    assert len({(m.task.question, m.task.passage) for m in made}) == 40  # no task twice


def test_the_logic_puzzles_are_unique_by_the_solver_and_a_clue_less_breaks_it() -> None:
    for m in generate("logic-grid", 10):
        people = tuple(m.spec["people"])
        values = {c: tuple(v) for c, v in m.spec["values"].items()}
        clues = [tuple(c) for c in m.spec["clues"]]
        assert len(solutions(people, values, clues)) == 1
        # every clue kept is needed: without any one, another solution fits
        assert all(len(solutions(people, values, clues[:i] + clues[i + 1 :])) > 1 for i in range(len(clues)))


def test_a_checker_catches_a_wrong_answer() -> None:
    for name, gen in SUITES.items():
        m = generate(name, 1)[0]
        wrong = m.task.model_copy(update={"answer": "999999" if name != "logic-grid" else "nobody"})
        assert not gen.check(type(m)(wrong, m.spec)), name


def test_a_longer_suite_starts_with_the_shipped_one_and_its_identity_names_it() -> None:
    longer, identity = load_suite("dates:60")
    shipped, shipped_identity = load_suite("dates")
    assert longer[:40] == shipped and len(longer) == 60
    assert (identity.name, identity.tasks, identity.seed, identity.generator_version) == ("dates", 60, 0, 1)
    assert identity.sha256 != shipped_identity.sha256
    for bad in ("nope", "dates:0", "dates:x"):
        with pytest.raises(Exception, match="--suite"):
            parse(bad)


def test_list_suites_names_each_with_its_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--list-suites"]) == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in SUITES) and "40" in shown


@pytest.mark.slow  # four evals through the CLI
def test_result_files_of_one_suite_compare_and_of_two_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = CliRunner()
    store = ["--llm", "fake", "--store", str(tmp_path / "s.db"), "--json"]

    def result(name: str, suite: str, arms: str, *extra: str) -> Path:
        done = runner.invoke(app, ["eval", "--suite", suite, "--arms", arms, *store, *extra])
        assert done.exit_code == 0, done.output
        path = tmp_path / name
        path.write_text(done.stdout, encoding="utf-8")
        return path

    page = tmp_path / "page" / "eval.html"
    a = result("a.json", "dates:3", "single", "--report", str(page))
    b = result("b.json", "dates:3", "single,single:temperature=0.5")
    c = result("c.json", "unit-chains:3", "single")
    data = json.loads(a.read_text())
    assert data["schema_version"] == 3 and data["dagmca_version"] and data["prompt_version"]
    assert data["task_set"]["source"] == "suite" and data["task_set"]["name"] == "dates"
    assert data["arms"][0]["model"]["model"] == "scripted"
    html = page.read_text(encoding="utf-8")
    assert (
        html.startswith("<!doctype html>") and "<table>" in html and "dates" in html and "<script" not in html
    )
    assert main(["eval", "--compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 0
    shown = capsys.readouterr()
    assert shown.out.count("dagmca eval --compare") == 1 and "b.json" in shown.out and "a.json" in shown.out
    assert (tmp_path / "cmp" / "compare.svg").read_text().startswith("<svg")
    assert main(["eval", "--compare", str(a), str(c)]) == 2
    refused = capsys.readouterr().err.strip()
    assert "different task sets" in refused and len(refused.splitlines()) == 1
