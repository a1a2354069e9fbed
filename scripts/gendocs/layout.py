"""layout.md: every module of the package with its docstring, and the import contracts."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from .markdown import HEADER, code, escape, first_paragraph, table
from .source import PACKAGE, ROOT


def module_rows(package: Path) -> list[list[str]]:
    rows = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT)
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        name = ".".join(rel.with_suffix("").parts)
        name = name.removesuffix(".__init__")
        rows.append([code(name), escape(first_paragraph(doc))])
    return rows


def contract_comments(text: str) -> list[str]:
    """The comment right above each `[[tool.importlinter.contracts]]` table, in order:
    what the contract protects, as pyproject.toml says it."""
    said = []
    chunks = text.split("[[tool.importlinter.contracts]]")
    for chunk in chunks[:-1]:
        lines = chunk.rstrip("\n").split("\n")
        comment: list[str] = []
        while lines and lines[-1].startswith("#"):
            comment.insert(0, lines.pop().lstrip("#").strip())
        said.append(" ".join(comment))
    return said


def page_layout() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    comments = contract_comments(text)
    linter = config.get("tool", {}).get("importlinter", {})
    out = [
        HEADER,
        "# Modules and import contracts\n",
        "The import contracts below are the ones `lint-imports` checks (`scripts/test.sh` runs "
        "it), read from `pyproject.toml`'s `[tool.importlinter]`. In a `layers` contract a "
        "module may import from the layers below its own, never from one above; modules "
        "joined by `|` share a layer and may not import each other. See "
        "[Architecture](../development/architecture.md) for why the layers are cut this way.\n",
        "## Import contracts\n",
    ]
    for contract, said in zip(linter.get("contracts", []), comments, strict=False):
        out.append(f"### {escape(contract.get('name', contract.get('type', 'contract')))}\n")
        if said:
            out.append(f"{escape(said)}\n")
        kind = contract.get("type", "")
        out.append(f"Type: `{kind}`.\n")
        if "layers" in contract:
            # one container: its layers' modules named in full
            within = f"{contract['containers'][0]}." if len(contract.get("containers", [])) == 1 else ""
            rows = [
                [str(i + 1), " \\| ".join(code(within + part.strip()) for part in layer.split("|"))]
                for i, layer in enumerate(contract["layers"])
            ]
            out.append(table(["layer (top first)", "modules"], rows))
        for key in ("ancestors", "containers", "source_modules", "forbidden_modules", "modules"):
            if key in contract:
                out.append(
                    f"{key.replace('_', ' ').capitalize()}: "
                    + ", ".join(code(m) for m in contract[key])
                    + ".\n"
                )
    out.append("## Modules\n")
    out.append("Every module of the package, with the first paragraph of its docstring.\n")
    out.append(table(["module", "what it holds"], module_rows(PACKAGE)))
    return "\n".join(out)
