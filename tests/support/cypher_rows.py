"""Rows of two Cypher engines (the embedded one, a Bolt server) made comparable: the
order only where the query fixes it, collect()'s lists sorted, floats rounded."""

from __future__ import annotations

import json
import re
from typing import Any


def collected(text: str) -> set[str]:
    """The columns a query fills with collect(): their order is the engine's, not data."""
    call = r"collect\((?:[^()]|\([^()]*\))*\)(?:\[[^\]]*\])?"
    return set(re.findall(call + r"\s+AS\s+(\w+)", text, re.IGNORECASE))


def comparable(text: str, rows: list[dict[str, Any]], *, ordered: bool) -> list[str]:
    """Rows as text with their collect() columns sorted; sorted themselves unless
    `ordered` (where the query orders by columns that leave no ties, so the order is the
    data's and not the engine's)."""
    lists = collected(text)
    shown = [
        json.dumps({k: sorted(v, key=json.dumps) if k in lists else v for k, v in r.items()}, sort_keys=True)
        for r in rows
    ]
    return shown if ordered else sorted(shown)


def rounded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with their floats to 9 places: percentileCont interpolates as Neo4j's source
    does (a·(1-f) + b·f), and ArcadeDB in another order, which differs in the last bit."""
    return [{k: round(v, 9) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
