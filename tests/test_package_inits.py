"""Every `__init__.py` of dagmca names what its package offers and holds nothing else: a
docstring, imports, names bound to what is imported or to a constant (`__all__` among
them), and imports under `if TYPE_CHECKING:`. No class and no function, but a module's
`__getattr__` that loads a re-exported name on first use (PEP 562), of a few lines.
A reader looking for a type opens the module named after it, never the package's
`__init__.py`. Read with `ast`, so nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAZY_HOOK_LINES = 10  # a `__getattr__` longer than this is logic of its own


def _type_checking(node: ast.If) -> bool:
    test = node.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING" and not node.orelse


def _only_imports(body: list[ast.stmt]) -> bool:
    return all(isinstance(n, ast.Import | ast.ImportFrom) for n in body)


def _lines(node: ast.stmt) -> int:
    return (node.end_lineno or node.lineno) - node.lineno + 1


def logic(source: str, where: str) -> list[str]:
    """What an `__init__.py`'s source holds beyond re-exports, one line each."""
    found = []
    for i, node in enumerate(ast.parse(source).body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if docstring or isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign):
            continue
        if isinstance(node, ast.If) and _type_checking(node) and _only_imports(node.body):
            continue
        lazy_hook = isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
        if lazy_hook and _lines(node) <= LAZY_HOOK_LINES:
            continue
        kind = type(node).__name__
        name = getattr(node, "name", "")
        found.append(f"{where}:{node.lineno}: {kind} {name}".rstrip())
    return found


def test_a_class_a_function_or_a_statement_in_an_init_is_found() -> None:
    source = '''"""A package."""
from typing import TYPE_CHECKING
from a.b import C
X = 1
if TYPE_CHECKING:
    from a.d import E
class Embedder:
    pass
def helper() -> int:
    return 1
for _ in range(2):
    X += 1
def __getattr__(name):
    return name
'''
    assert logic(source, "p/__init__.py") == [
        "p/__init__.py:7: ClassDef Embedder",
        "p/__init__.py:9: FunctionDef helper",
        "p/__init__.py:11: For",
    ]
    long_hook = "def __getattr__(name):\n" + "    x = 1\n" * LAZY_HOOK_LINES + "    return x\n"
    assert logic(long_hook, "q/__init__.py") == ["q/__init__.py:1: FunctionDef __getattr__"]


def test_every_init_in_dagmca_only_re_exports() -> None:
    inits = sorted((ROOT / "dagmca").rglob("__init__.py"))
    assert len(inits) > 20, "the package's __init__.py files were not found"
    found = [p for path in inits for p in logic(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert found == [], "move these into a module of their own and re-export them:\n" + "\n".join(found)
