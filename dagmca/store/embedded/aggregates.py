"""Cypher's aggregating functions over the values a group's rows gave their argument:
count, sum, avg, min, max, collect, stDev, stDevP, percentileCont and percentileDisc, each
with DISTINCT, nulls left out, as Neo4j 5 computes them."""

from __future__ import annotations

import math
from typing import Any

from dagmca.errors import UserError
from dagmca.store.embedded.expression_compiler import Aggregate, Row
from dagmca.store.embedded.values import compare, hashable


def aggregate(agg: Aggregate, read: list[Any], first: Row) -> Any:
    """The aggregate over the values its argument read, one per row of the group;
    `first`: the group's first row, where a second argument (the percentile) is read."""
    if agg.arg is None:  # count(*)
        return len(read)
    values = [v for v in read if v is not None]
    if agg.distinct:
        seen: set[Any] = set()
        values = [v for v in values if not ((k := hashable(v)) in seen or seen.add(k))]  # type: ignore[func-returns-value]
    name = agg.name
    if name == "count":
        return len(values)
    if name == "collect":
        return values
    if name in ("min", "max"):
        best = None
        for v in values:
            c = compare(v, best) if best is not None else None
            if best is None or (c is not None and (c < 0 if name == "min" else c > 0)):
                best = v
        return best
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != len(values):
        raise UserError(f"{name}() needs numbers")
    if name == "sum":
        return sum(numbers) if numbers else 0
    if name.startswith("percentile"):
        assert agg.extra is not None
        return _percentile(name, sorted(numbers), agg.extra(first))
    if not numbers:
        return None
    mean = sum(numbers) / len(numbers)
    if name == "avg":
        return mean
    spread = sum((x - mean) ** 2 for x in numbers)
    if name == "stdevp":
        return math.sqrt(spread / len(numbers))
    return math.sqrt(spread / (len(numbers) - 1)) if len(numbers) > 1 else 0.0


def _percentile(name: str, ordered: list[Any], p: Any) -> Any:
    """Neo4j's percentiles: percentileDisc picks a value of the group (the one at the
    rank p·n rounds up to), percentileCont interpolates between the two around p·(n-1)."""
    if not isinstance(p, int | float) or isinstance(p, bool) or not 0 <= p <= 1:
        spelled = "percentileDisc" if name == "percentiledisc" else "percentileCont"
        raise UserError(f"{spelled}() takes a percentile between 0.0 and 1.0, not {p!r}")
    n = len(ordered)
    if not n:
        return None
    if name == "percentiledisc":
        if p == 1 or n == 1:
            return ordered[-1]
        at = p * n
        index = int(at)
        return ordered[index if at != index or index == 0 else index - 1]
    at = p * (n - 1)
    low, high = math.floor(at), math.ceil(at)
    if low == high or low == n - 1:
        return float(ordered[low])
    return float(ordered[low] * (high - at) + ordered[high] * (at - low))
