"""The documentation's Python examples run as written: each ```python block of every
page under docs/, in a fresh interpreter in a folder of its own (so a block cannot lean
on another's leftovers), must exit 0 and print something.

The folder holds what the pages tell a reader to have first: a store with a session
(`graph.db`, and `.dagmca/dagmca.db` where no store is named), a tasks file, the
virtualenv's `dagmca`. An example that names an endpoint (`llm="openai"`) runs on the
scripted fake model instead, and so does every command it starts (the folder's
dagmca.toml): the examples are checked for running as written, not for a model's answers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sessions import PASSAGE

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# an endpoint named in an example: the fake model in its place
ENDPOINT = re.compile(r"""(llm\s*=\s*|["']llm["']\s*:\s*)["']openai["']""")
TASKS = 2  # of the example tasks file: enough for the example to score its arms


def blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for n, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")), 1):
            found.append((str(page.relative_to(ROOT)), n, code))
    return found


def test_the_pages_with_examples_are_all_found() -> None:
    pages = {page for page, _, _ in blocks()}
    wanted = {
        "docs/guides/python-api.md",
        "docs/guides/evaluation.md",
        "docs/guides/mcp.md",
        "docs/guides/ask.md",
    }
    assert wanted <= pages, pages


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the pages assume a reader has, made once: a store with a session of the fake."""
    root = tmp_path_factory.mktemp("docs")
    _share_data(root)
    (root / "p.txt").write_text(PASSAGE, encoding="utf-8")
    made = subprocess.run(
        [sys.executable, "-m", "dagmca", "run", "p.txt", "--llm", "fake", "--store", "graph.db", "-q",
         "--max-depth", "1", "--max-branches", "1"],
        cwd=root, capture_output=True, text=True, timeout=300, env=_env(root), check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    (root / ".dagmca").mkdir()
    shutil.copy(root / "graph.db", root / ".dagmca" / "dagmca.db")
    lines = (ROOT / "examples" / "eval" / "arithmetic.jsonl").read_text(encoding="utf-8").splitlines()
    (root / "tasks.jsonl").write_text("\n".join(lines[:TASKS]) + "\n", encoding="utf-8")
    (root / "dagmca.toml").write_text('[llm]\nllm = "fake"\n', encoding="utf-8")
    return root


def _env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(home)}


def _share_data(home: Path) -> None:
    """A home of its own with the user's dagmca data folder in it: the embedder distilled
    there once (minutes of CPU) is not distilled again by each example, or by a server an
    example starts (which gets a home, not the rest of the environment)."""
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "dagmca"
    data.mkdir(parents=True, exist_ok=True)
    (home / ".local" / "share").mkdir(parents=True)
    (home / ".local" / "share" / "dagmca").symlink_to(data)


@pytest.mark.parametrize(("page", "number", "code"), blocks(), ids=lambda v: str(v)[:40])
@pytest.mark.slow
def test_the_example_runs(prepared: Path, tmp_path: Path, page: str, number: int, code: str) -> None:
    folder = Path(shutil.copytree(prepared, tmp_path / "here", symlinks=True))
    (folder / ".venv").symlink_to(Path(sys.executable).parent.parent)
    done = subprocess.run(
        [sys.executable, "-c", ENDPOINT.sub(r'\1"fake"', code)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=_env(folder),
    )
    assert done.returncode == 0, f"{page} example {number} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{page} example {number} printed nothing"


FENCE = re.compile(r"^```(\w*)\s*$")
SHELL = {"bash", "sh", "shell", "console"}
NOT_COMMANDS = {"python", "json", "jsonl", "toml", "cypher", "mermaid", "yaml", "html"}
# the page of dagmca installed as a tool (pip, pipx, uv tool), where `dagmca` is on the PATH
INSTALLED = "docs/getting-started/install.md"
# a command written the short way: `dagmca ...`, or a repository script or module run by
# whichever python is first on the PATH
SHORT = re.compile(r"^([A-Z_][A-Z0-9_]*=\S+\s+)*(dagmca(\s|$)|python3?\s+(scripts/|-m\s+(dagmca|pytest)))")


def command_lines() -> list[tuple[str, str, str]]:
    """(page, block language, line) of every command line of the pages: each line of a
    shell block (but its continuations and comments), and each `$ ` line of a transcript."""
    found = []
    for page in [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]:
        lang: str | None = None
        for line in page.read_text(encoding="utf-8").splitlines():
            fence = FENCE.match(line)
            if lang is None and fence:
                lang = fence.group(1)
            elif lang is not None and line.startswith("```"):
                lang = None
            elif lang is not None and lang not in NOT_COMMANDS:
                shell = lang in SHELL and line.strip() and not line.startswith((" ", "#"))
                if shell or line.startswith("$ "):
                    found.append((str(page.relative_to(ROOT)), lang, line))
    return found


def test_the_pages_write_a_command_one_way() -> None:
    """`.venv/bin/dagmca ...` and `.venv/bin/python scripts/...`, as a clone sets them up,
    on every page but the installed tool's; and a shell block holds commands, with no
    prompt (a `$ ` line is a transcript's, its output below it)."""
    lines = command_lines()
    assert len(lines) > 100, "the walk found the pages' commands"
    short = [
        f"{page}: {line}"
        for page, _, line in lines
        if page != INSTALLED and SHORT.match(line.removeprefix("$ "))
    ]
    assert short == []
    prompted = [f"{page}: {line}" for page, lang, line in lines if lang in SHELL and line.startswith("$ ")]
    assert prompted == []


def test_the_python_api_guide_runs_as_written_without_a_key() -> None:
    """Every example of the Python API guide is on the offline fake as printed: none
    leans on the substitution above to run without an endpoint's key."""
    page = (DOCS / "guides" / "python-api.md").read_text(encoding="utf-8")
    codes = BLOCK.findall(page)
    assert len(codes) >= 4
    for code in codes:
        assert not ENDPOINT.search(code), code
