"""The Cypher cookbook (`examples/queries.cypher`) as named queries."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CookbookQuery:
    name: str
    needs: tuple[str, ...]
    text: str


def parse_cookbook(source: str) -> list[CookbookQuery]:
    """Queries start with `// name:` and `// needs:` comments and end with a semicolon."""
    queries = []
    for chunk in re.split(r";[ \t]*(?:\n|$)", source):
        name = re.search(r"^// name:\s*(\S+)", chunk, re.MULTILINE)
        if name is None:
            continue
        needs = re.search(r"^// needs:\s*(.+)$", chunk, re.MULTILINE)
        body = chunk[name.start() :]
        queries.append(
            CookbookQuery(
                name=name.group(1),
                needs=tuple(x.strip() for x in needs.group(1).split(",")) if needs else (),
                text=body.strip(),
            )
        )
    return queries


def load_cookbook(path: Path) -> list[CookbookQuery]:
    return parse_cookbook(path.read_text(encoding="utf-8"))
