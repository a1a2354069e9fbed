"""What the pages read from the source files themselves: where the checkout is, and the
comments beside its definitions."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dagmca"
# the pages import dagmca from this checkout, not from whatever is installed
sys.path.insert(0, str(ROOT))


def source_comments(path: Path) -> tuple[dict[int, str], set[int]]:
    """The comment on each line of a file, and the lines that hold nothing but one."""
    comments: dict[int, str] = {}
    code_lines: set[int] = set()
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            for line in range(tok.start[0], tok.end[0] + 1):
                code_lines.add(line)
    return comments, {line for line in comments if line not in code_lines}


def member_comments(path: Path, class_name: str | None = None) -> dict[str, str]:
    """The comments of the assignments in a class body (or, without a class, a module's
    top level): the comment lines right above an assignment, then the comment at the
    end of its line(s). Comments that are noqa/type/fmt pragmas are skipped."""
    comments, alone = source_comments(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body: list[ast.stmt] = tree.body
    if class_name is not None:
        body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    found: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            name = node.targets[0].id
        else:
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line in alone:
            above.insert(0, comments[line])
            line -= 1
        end = node.end_lineno or node.lineno
        beside = [comments[n] for n in range(node.lineno, end + 1) if n in comments and n not in alone]
        text = " ".join(c for c in [*above, *beside] if not re.match(r"(noqa|type:|fmt:)", c))
        if text:
            found[name] = text
    return found
