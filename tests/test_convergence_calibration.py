"""The convergence threshold is chosen on one half of the labelled round pairs and its
false and missed stops measured on the other; the figures the script prints today are
the ones the benchmarks page gives, with the commit that made them; and a check that
cannot end a debate with the rounds given says so in `--help` and the run summary."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import typer

from dagmca.cli import console
from dagmca.cli.app import app, main
from dagmca.cli.summary import convergence_row
from dagmca.config import SessionConfig
from dagmca.graph import NodeKind, NodeRecord

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "development" / "benchmarks.md"
SCRIPT = ROOT / "scripts" / "calibrate_convergence.py"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("### Convergence out of sample")
    return text[start : text.index("\n### ", start + 1)]


def test_the_labelled_set_has_sixty_pairs_of_every_kind_the_check_must_tell_apart() -> None:
    data = ROOT / "tests" / "data" / "convergence_pairs.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 60 and {r["label"] for r in rows} == {"same", "changed"}
    kinds = Counter(r["kind"] for r in rows)
    for kind in ("paraphrased", "reordered", "position reversed", "hedged"):
        assert kinds[kind] >= 5, kind
    # written as a strong model writes a root output: in parts, a couple of hundred words
    assert sum(len(r["after"].split()) >= 150 for r in rows) >= 48


@pytest.mark.slow  # loads the default embedder in a process of its own
def test_the_held_out_figures_are_in_the_benchmarks_page_with_the_commit_that_made_them() -> None:
    printed = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    held_out = printed[printed.index("threshold chosen") : printed.index("in-sample")].strip().splitlines()
    section = _section()
    for line in held_out:
        assert line in section, line
    chosen = float(re.search(r"threshold chosen on \d+ pairs: ([0-9.]+)", printed).group(1))  # type: ignore[union-attr]
    assert chosen == SessionConfig().convergence_threshold  # the threshold shipped is the one chosen
    commit = re.search(r"Measured on \d{4}-\d{2}-\d{2} at ([0-9a-f]{7,40})", section)
    assert commit, "the figures name the commit that made them"
    git = ["git", "cat-file", "-t", commit.group(1)]
    known = subprocess.run(git, capture_output=True, text=True, cwd=ROOT)
    assert known.stdout.strip() == "commit"


@pytest.mark.slow  # builds every command's options
def test_help_says_the_check_cannot_end_a_debate_with_two_rounds() -> None:
    run = next(c for c in typer.main.get_command(app).commands.values() if c.name == "run")  # type: ignore[attr-defined]
    helps = {p.name: p.help or "" for p in run.params}
    assert "it can end a debate early only from 3 rounds" in helps["rounds"]
    assert "with --rounds 2 or fewer the check cannot end a debate early" in helps["convergence_threshold"]


def _debate(converged: bool, rounds: int) -> NodeRecord:
    props = {"converged": converged, "rounds": rounds}
    at = f"s/d{rounds}{converged}"
    return NodeRecord(id=at, kind=NodeKind.DEBATE, session="s", created_at="", props=props)


def test_the_summary_says_what_the_check_did() -> None:
    assert convergence_row(2, 0.73, "mca", []).startswith("cannot end a debate early with --rounds 2")
    row = convergence_row(4, 0.73, "mca", [_debate(True, 2), _debate(False, 4), _debate(True, 4)])
    assert row.startswith("1 of 3 debates stopped before round 4")
    assert convergence_row(2, 0.73, "vote", []).startswith("not used")


@pytest.mark.slow  # a whole run, with the default embedder
def test_a_run_with_two_rounds_says_so_in_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a row, a line (the console, made at import, reads COLUMNS once: set its width itself)
    monkeypatch.setattr(console.out, "width", 400)
    passage = tmp_path / "p.txt"
    passage.write_text(
        "Cities should price road space. Congestion is a cost each driver imposes on others.", "utf-8"
    )
    args = ["run", str(passage), "--llm", "fake", "--store", str(tmp_path / "g.db"), "--session", "t"]
    assert main([*args, "--max-depth", "0", "--quiet", "--out", str(tmp_path / "out")]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if "│ convergence" in line]
    assert "cannot end a debate early with --rounds 2" in row
