"""What test files share lives in tests/support/: no file of the tests or the scripts
imports a test file or tests/conftest.py (which holds fixtures, found by pytest without
an import). Read with `ast`, so nothing is imported."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(node: ast.AST) -> Iterator[tuple[str, int]]:
    """(the module imported, line) of every import in a tree, a function's own included."""
    for child in ast.walk(node):
        if isinstance(child, ast.Import):
            yield from ((alias.name, child.lineno) for alias in child.names)
        elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
            yield child.module, child.lineno


def _forbidden(module: str) -> bool:
    """A test file or the conftest, named from the root (`tests.test_x`) or bare (`conftest`)."""
    parts = module.split(".")
    return (len(parts) == 1 or parts[0] == "tests") and (
        parts[-1] == "conftest" or parts[-1].startswith("test_")
    )


def find_imports(root: Path, paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        for module, line in sorted(_modules(ast.parse(path.read_text(), str(path))), key=lambda m: m[1]):
            if _forbidden(module):
                found.append(f"{path.relative_to(root).as_posix()}:{line}: {module}")
    return found


def test_no_test_file_or_script_imports_a_test_file_or_the_conftest() -> None:
    paths = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")])
    found = find_imports(ROOT, paths)
    assert not found, "move what is shared to tests/support/:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_import(tmp_path: Path) -> None:
    # the conftest's imports in two pieces: a grep for them finds only real ones
    (tmp_path / "a.py").write_text(
        "from tests.conftest"
        " import PASSAGE\n"
        "import tests.test_cli\n"
        "def f():\n"
        "    from conftest"
        " import run_scripted\n"
        "from test_ledger import run\n"
        "from tests.support.sessions import PASSAGE\n"
        "import pytest\n"
    )
    assert find_imports(tmp_path, [tmp_path / "a.py"]) == [
        "a.py:1: tests.conftest",
        "a.py:2: tests.test_cli",
        "a.py:4: conftest",
        "a.py:5: test_ledger",
    ]
