"""Errors on the one-line rule, as users meet them: one line on stderr, the exit code the
exit-code page gives, no traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import assert_user_error, dagmca


@pytest.mark.parametrize("question", ["", "   \n "])
def test_an_empty_question_is_one_line_and_exit_2(tmp_path: Path, question: str) -> None:
    proc = dagmca("run", "--question", question, "--llm", "fake", cwd=tmp_path)
    assert_user_error(proc, "the question is empty", tmp_path)


@pytest.mark.slow  # a dagmca process
def test_mcp_refuses_a_store_that_does_not_exist(tmp_path: Path) -> None:
    proc = dagmca("mcp", "--store", "typo.db", "--llm", "fake", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no store at typo.db" in lines[0], proc.stderr
    assert not (tmp_path / "typo.db").exists()
