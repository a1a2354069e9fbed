"""Nothing an eval leaves out goes unsaid: first-vote on open tasks, the plot an open
eval cannot draw, a rerun's sessions read back, a --reference with no question to score;
and an eval's many sessions stay out of `dagmca sessions` unless asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmca.cli.app import main
from dagmca.evaluation.notices import NoticeKind
from tests.support.evals import open_tasks, run, scripted
from tests.support.pair_judges import longer_always


def test_first_vote_on_open_tasks_says_it_was_left_out(tmp_path: Path) -> None:
    report, _ = run(tmp_path, scripted(lambda a, t, r: "x", longer_always), open_tasks(2), "mca,first-vote")
    (said,) = [n for n in report.notices if n.kind is NoticeKind.NOT_SCORED]
    assert said.arms == ["first-vote"] and "left out of 2 open tasks" in said.message


@pytest.mark.slow  # two evals and four reads through the CLI
def test_an_eval_says_what_it_skipped_and_its_sessions_stay_out_of_the_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    (folder / "p.txt").write_text("Fares fell and riders rose.", encoding="utf-8")
    db = str(tmp_path / "c.db")
    run_args = ["--llm", "fake", "--store", db]
    assert (
        main(["run", "--question", "What is 2 + 2?", "--session", "mine", *run_args]) == 0
    )  # the user's own
    capsys.readouterr()
    args = ["eval", str(folder), "--arms", "single,mca:rounds=1", *run_args, "--out", str(tmp_path / "r")]
    assert main(args) == 0
    first = capsys.readouterr().err
    assert "no quality-cost plot: no arm has an accuracy" in first
    assert main(args) == 0  # again: every session read back, and said so
    assert "read back from an earlier run" in capsys.readouterr().err
    assert main(["sessions", "--store", db]) == 0
    listed = capsys.readouterr()
    assert listed.out.count("eval-") == 0 and "2 sessions of 1 evals not listed" in listed.err
    assert main(["sessions", "--store", db, "--all"]) == 0
    assert capsys.readouterr().out.count("eval-") == 2
    ran = json.loads((tmp_path / "r" / "eval.json").read_text())["eval_id"]
    assert main(["sessions", "--store", db, "--eval", ran]) == 0
    only = capsys.readouterr().out
    assert only.count("eval-") == 2 and "mine" not in only


@pytest.mark.slow  # a session and its metrics through the CLI
def test_a_reference_for_a_session_without_a_question_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("A short passage about fares and riders.", encoding="utf-8")
    db = str(tmp_path / "c.db")
    assert (
        main(["run", str(plain), "--llm", "fake", "--store", db, "--session", "plain", "--max-depth", "0"])
        == 0
    )
    capsys.readouterr()
    assert main(["metrics", "plain", "--store", db, "--reference", "42"]) == 2
    said = capsys.readouterr().err.strip()
    assert "asked no question" in said and len(said.splitlines()) == 1
