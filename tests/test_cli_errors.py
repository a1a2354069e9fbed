"""Errors on the one-line rule, as users meet them: one line on stderr, the exit code the
exit-code page gives, no traceback, nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dagmca.api import Workspace
from dagmca.cli.app import main
from dagmca.graph import SessionStatus
from dagmca.similarity import HashingEmbedder
from tests.support.cli import assert_user_error, dagmca
from tests.support.sessions import PASSAGE

SMALL = {"llm": "fake", "max_depth": 0, "rounds": 1}


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


def test_resume_and_ledger_pass_their_options_to_the_api_and_turn_its_refusals_into_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The API decides (a spent budget, a bad value, a done session); the command names
    the option to change, in one line."""
    db = tmp_path / "r.db"

    async def spend() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            cut = await ws.run(PASSAGE, settings={**SMALL, "max_llm_calls": 3}, session="b")
            assert cut.status is SessionStatus.BUDGET_EXHAUSTED

    asyncio.run(spend())
    capsys.readouterr()

    def refused(*args: str) -> str:
        code = main([*args, "--store", str(db)])
        lines = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("dagmca: error:"), lines
        return lines[0]

    spent = refused("resume", "b")
    assert "budget spent" in spent and "--max-llm-calls" in spent
    bad = refused("resume", "b", "--llm", "bogus")
    assert "--llm: " in bad and "see the command's --help" in bad
    assert "--ledger: " in refused("ledger", "b", "--ledger", "bogus")
    # moved to another model: said once the session opens
    assert (
        main(["resume", "b", "--store", str(db), "--max-llm-calls", "10000", "--model", "m2", "--quiet"]) == 0
    )
    said = capsys.readouterr()
    assert "done (resumed)" in said.out
    assert said.err.count("dagmca: note: the session ran on fake (default model); this run uses fake m2") == 1
    # a finished session resumed again: nothing to do, said on stdout, not an error
    assert main(["resume", "b", "--store", str(db)]) == 0
    assert "b is already done; nothing to resume" in capsys.readouterr().out
