"""What `dagmca --version` and `dagmca run --help` print."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmca
from tests.support.cli import dagmca as dagmca_cli


def test_version_prints_the_version(tmp_path: Path) -> None:
    proc = dagmca_cli("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"dagmca {dagmca.__version__}"


@pytest.mark.slow  # dagmca processes
def test_run_help_is_short_and_still_names_every_variable(tmp_path: Path) -> None:
    proc = dagmca_cli("run", "--help", cwd=tmp_path, env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) < 400, len(lines)  # 729 when every role's option was listed, each variable on a line
    text = " ".join(proc.stdout.split())
    for needle in ("DAGMCA_CPP", "DAGMCA_MAX_LLM_CALLS", "--judge-model", "DAGMCA_JUDGE_MODEL", "Budget"):
        assert needle in text, needle
    assert "--judge-temperature" not in text  # a role's options are named by the rule, not listed
    # and they still work
    args = ["run", "--question", "Is it?", "--llm", "fake", "--judge-temperature", "0.5", "--dry-run"]
    run = dagmca_cli(*args, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
