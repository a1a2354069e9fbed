"""The command line's code stays readable: no function in `dagmca/cli/` over 80 lines
(a command's options are a typed object its API entry shares, not a parameter list),
plain printing written once (`dagmca.cli.console.plain`), and a command's options
object checked as the API checks it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagmca.api import EvalOptions, SwarmOptions
from dagmca.cli.app import app
from dagmca.errors import UserError
from dagmca.workspace.inputs import options_from

CLI = Path(__file__).resolve().parents[1] / "dagmca" / "cli"
LONGEST = 80


def functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((path.name, node))
    return found


def test_no_function_of_the_cli_is_over_80_lines() -> None:
    assert len(functions()) > 100  # the walk found the commands and their parts
    long = {
        f"{name}:{node.name}": node.end_lineno - node.lineno + 1
        for name, node in functions()
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > LONGEST
    }
    assert long == {}


def test_plain_printing_is_written_once() -> None:
    """`markup=False` (a passage's "[x]" printed as written) appears in the console's
    helper alone: every command prints plain text through it."""
    written = [
        f"{path.name}:{node.lineno}"
        for path in sorted(CLI.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.keyword) and node.arg == "markup"
    ]
    assert written == ["console.py:16"]


def test_a_bad_option_is_the_same_refusal_from_the_command_and_the_api() -> None:
    with pytest.raises(UserError, match=r"option noise_floor: .*2 repeats or more"):
        options_from(EvalOptions, {"noise_floor": True})
    with pytest.raises(UserError, match="unknown router 'smart'"):
        options_from(SwarmOptions, {"router": "affinity,smart"})
    assert options_from(EvalOptions, {"repeats": 2, "noise_floor": True}).noise_floor
    given = EvalOptions(arms="single")
    assert options_from(EvalOptions, given) is given
    said = CliRunner().invoke(app, ["eval", "t.jsonl", "--noise-floor", "--llm", "fake"])
    assert isinstance(said.exception, UserError)
    line = said.exception.line()
    assert line.startswith("--noise-floor: ") and "2 repeats or more" in line
