"""The Cypher cookbook (`examples/queries.cypher`) as named queries, and the cookbook
itself (`COOKBOOK`)."""

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


COOKBOOK = load_cookbook(Path(__file__).resolve().parents[2] / "examples" / "queries.cypher")
# The Bolt server of the tests (ArcadeDB) has no full-text index, so this query's rows
# are compared with nothing; test_the_embedded_store_searches_the_texts checks it alone.
NOT_ON_THE_TEST_SERVER = {"search-the-texts"}
