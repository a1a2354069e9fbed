"""Other packages are used through their public API only: no import of another
package's private module or name, and no use of a private attribute that dagmca does
not define itself (another package's: `client._client`, `exporter._transport`).

A private module or attribute is one whose name starts with one underscore. Another
package's private parts change without notice in its releases, so a new install of
dagmca would break on a release it never saw. Read with `ast`, so nothing is imported.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Set
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dagmca"

# (file under dagmca/, the private name) -> why it is allowed. None is expected: a new
# entry needs a reason that no public API does the same.
EXCEPTIONS: dict[tuple[str, str], str] = {}

# names with an underscore that the language documents as public: a named tuple's own
# API, an enum member's sunder names, `os._exit` (an exit that runs no exit handlers)
LANGUAGE = frozenset(
    {"_asdict", "_replace", "_fields", "_make", "_field_defaults", "_name_", "_value_", "_missing_", "_exit"}
)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def _own() -> frozenset[str]:
    return frozenset(_own_names(_trees()))


def _own_names(trees: dict[Path, ast.Module]) -> set[str]:
    """Every private name dagmca defines: its functions, classes, parameters, the names
    and attributes it assigns, its modules."""
    names = {p.stem for p in _files()} | {p.name for p in PACKAGE.rglob("*") if p.is_dir()}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
    return {n for n in names if _private(n)}


def _theirs(name: str, own: Set[str]) -> bool:
    """A private name that dagmca does not define: another package's."""
    return _private(name) and name not in own and name not in LANGUAGE


def _foreign(module: str | None, level: int) -> bool:
    return level == 0 and module is not None and module.split(".")[0] != "dagmca"


def _violations(path: Path, tree: ast.Module, own: Set[str]) -> Iterator[tuple[str, str, int]]:
    """(the private name, what uses it, line) of every use of another package's private part."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _foreign(alias.name, 0) and any(_private(part) for part in alias.name.split(".")):
                    yield alias.name, f"import {alias.name}", node.lineno
        elif isinstance(node, ast.ImportFrom) and _foreign(node.module, node.level):
            module = node.module or ""
            if any(_private(part) for part in module.split(".")):
                yield module, f"from {module} import ...", node.lineno
            for alias in node.names:
                if _private(alias.name):
                    yield alias.name, f"from {module} import {alias.name}", node.lineno
        elif isinstance(node, ast.Attribute) and _theirs(node.attr, own):
            yield node.attr, f"the attribute .{node.attr}", node.lineno
        elif isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else None
            if called in {"getattr", "hasattr", "setattr", "delattr"} and len(node.args) >= 2:
                value = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
                if isinstance(value, str) and _theirs(value, own):
                    yield value, f"{called}(..., {value!r})", node.lineno
            for keyword in node.keywords:
                if keyword.arg and _theirs(keyword.arg, own):
                    yield keyword.arg, f"the keyword {keyword.arg}=", node.lineno


@functools.cache
def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in _files()}


def find_violations() -> list[str]:
    trees, own = _trees(), _own()
    found = []
    for path, tree in trees.items():
        where = path.relative_to(PACKAGE.parent).as_posix()
        for name, use, line in _violations(path, tree, own):
            if (where, name) not in EXCEPTIONS:
                found.append(f"{where}:{line}: {use}")
    return found


def test_no_private_part_of_another_package_is_used() -> None:
    found = find_violations()
    assert not found, "another package's private parts are used:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_private_use(tmp_path: Path) -> None:
    source = (
        "import openai._vendor.x\n"
        "from typer._click.core import Command\n"
        "from opentelemetry.sdk import _shared\n"
        "t = client._client._transport\n"
        "getattr(c, '_mounts')\n"
        "E(_transport=t)\n"
        "self._own = 1\n"
        "p._own\n"
        "n._asdict()\n"
        "from dagmca.x import _y\n"
    )
    tree = ast.parse(source)
    found = sorted((line, name) for name, _, line in _violations(tmp_path / "x.py", tree, {"_own", "_y"}))
    assert found == [
        (1, "openai._vendor.x"),
        (2, "typer._click.core"),
        (3, "_shared"),
        (4, "_client"),
        (4, "_transport"),
        (5, "_mounts"),
        (6, "_transport"),
    ]


def test_every_exception_is_still_needed_and_says_why() -> None:
    trees, own = _trees(), _own()
    used = {
        (path.relative_to(PACKAGE.parent).as_posix(), name)
        for path, tree in trees.items()
        for name, _, _ in _violations(path, tree, own)
    }
    for key, reason in EXCEPTIONS.items():
        assert key in used, f"{key} is listed as an exception but no longer used"
        assert len(reason) > 20, f"{key}: the exception needs its reason"
