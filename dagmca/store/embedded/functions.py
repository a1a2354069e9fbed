"""Cypher's scalar functions over the engine's values, with null in, null out, as Neo4j 5
has them."""

from __future__ import annotations

import math
import random
import unicodedata
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from dagmca.store.embedded.conversions import CONVERSIONS
from dagmca.store.embedded.operators import CypherTypeError
from dagmca.store.embedded.syntax import Unsupported
from dagmca.store.embedded.values import Node, Path, Rel

AGGREGATES = frozenset(
    {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont", "percentiledisc"}
)


def _kind(v: Any) -> str:
    return type(v).__name__


def _round(x: Any, precision: Any = 0, mode: Any = None) -> Any:
    """HALF_UP, as Neo4j rounds; always a float."""
    if mode is not None:
        raise Unsupported("round() with a rounding mode is not supported on the embedded store")
    factor = 10.0 ** int(precision)
    value = float(x) * factor
    rounded = math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)
    return rounded / factor


def _size(v: Any) -> Any:
    if isinstance(v, list | str):
        return len(v)
    raise CypherTypeError(f"size() needs a list or a string, not {_kind(v)}")


def _length(v: Any) -> Any:
    if isinstance(v, Path):
        return len(v.rels)
    return _size(v)


def _labels(v: Any) -> Any:
    if not isinstance(v, Node):
        raise CypherTypeError(f"labels() needs a node, not {_kind(v)}")
    return list(v.labels)


def _props(v: Any) -> Any:
    if isinstance(v, Node | Rel):
        return dict(v.props)
    if isinstance(v, dict):
        return dict(v)
    raise CypherTypeError(f"properties() needs a node, relationship or map, not {_kind(v)}")


def _normalize(v: Any, form: Any = "NFC") -> Any:
    """`normalize(text)` or `normalize(text, NFKC)`: the form is read as a name."""
    if form == "NFC":
        return unicodedata.normalize("NFC", v)
    if form == "NFD":
        return unicodedata.normalize("NFD", v)
    if form == "NFKC":
        return unicodedata.normalize("NFKC", v)
    if form == "NFKD":
        return unicodedata.normalize("NFKD", v)
    raise CypherTypeError(f"normalize() has no form {form!r} (NFC, NFD, NFKC or NFKD)")


# The longest list range() builds: the list is made in memory at once, before a time
# limit can stop it, so a range of billions would exhaust memory first.
RANGE_CAP = 10_000_000


def _range(start: Any, stop: Any, step: Any = 1) -> Any:
    values = range(int(start), int(stop) + (1 if step > 0 else -1), int(step))
    if len(values) > RANGE_CAP:
        raise Unsupported(
            f"range() of {len(values):,} values is refused on the embedded store: it builds the list "
            f"in memory, up to {RANGE_CAP:,} values"
        )
    return list(values)


def _substring(v: Any, start: Any, length: Any = None) -> Any:
    return v[int(start) :] if length is None else v[int(start) : int(start) + int(length)]


def _ends(v: Any, which: str) -> Any:
    if not isinstance(v, Rel):
        raise CypherTypeError(f"{which}() needs a relationship, not {_kind(v)}")
    return v.start if which == "startNode" else v.end


# name: (function, null in gives null out)
SCALARS: dict[str, tuple[Callable[..., Any], bool]] = {
    "coalesce": (lambda *vs: next((v for v in vs if v is not None), None), False),
    "labels": (_labels, True),
    "type": (lambda r: r.type if isinstance(r, Rel) else None, True),
    "id": (lambda v: v.key, True),
    "elementid": (lambda v: str(v.key), True),
    "keys": (lambda v: sorted(_props(v)), True),
    "properties": (_props, True),
    "size": (_size, True),
    "length": (_length, True),
    "nodes": (lambda p: list(p.nodes), True),
    "relationships": (lambda p: list(p.rels), True),
    "startnode": (lambda r: _ends(r, "startNode"), True),
    "endnode": (lambda r: _ends(r, "endNode"), True),
    "reverse": (lambda v: v[::-1], True),
    "head": (lambda v: v[0] if v else None, True),
    "last": (lambda v: v[-1] if v else None, True),
    "tail": (lambda v: v[1:], True),
    "isempty": (lambda v: len(v) == 0, True),
    "range": (_range, True),
    "round": (_round, True),
    "abs": (abs, True),
    "ceil": (lambda v: float(math.ceil(v)), True),
    "floor": (lambda v: float(math.floor(v)), True),
    "sqrt": (lambda v: math.sqrt(v) if v >= 0 else math.nan, True),
    "sign": (lambda v: (v > 0) - (v < 0), True),
    "log": (lambda v: math.log(v) if v > 0 else math.nan, True),
    "exp": (math.exp, True),
    "rand": (random.random, False),
    "pi": (lambda: math.pi, False),
    "e": (lambda: math.e, False),
    "log10": (lambda v: math.log10(v) if v > 0 else math.nan, True),
    "isnan": (lambda v: isinstance(v, float) and math.isnan(v), True),
    "sin": (math.sin, True),
    "cos": (math.cos, True),
    "tan": (math.tan, True),
    "cot": (lambda v: math.cos(v) / math.sin(v) if math.sin(v) else math.inf, True),
    "asin": (lambda v: math.asin(v) if -1 <= v <= 1 else math.nan, True),
    "acos": (lambda v: math.acos(v) if -1 <= v <= 1 else math.nan, True),
    "atan": (math.atan, True),
    "atan2": (math.atan2, True),
    "degrees": (math.degrees, True),
    "radians": (math.radians, True),
    "haversin": (lambda v: (1 - math.cos(v)) / 2, True),
    "tolower": (lambda v: v.lower(), True),
    "toupper": (lambda v: v.upper(), True),
    "lower": (lambda v: v.lower(), True),
    "upper": (lambda v: v.upper(), True),
    "btrim": (lambda v, chars=None: v.strip(chars), True),
    "char_length": (len, True),
    "character_length": (len, True),
    "normalize": (_normalize, True),
    "nullif": (lambda a, b: None if a == b and type(a) is type(b) else a, False),
    "randomuuid": (lambda: str(uuid.uuid4()), False),
    "trim": (lambda v: v.strip(), True),
    "ltrim": (lambda v: v.lstrip(), True),
    "rtrim": (lambda v: v.rstrip(), True),
    "replace": (lambda v, a, b: v.replace(a, b), True),
    "split": (lambda v, sep: v.split(sep), True),
    "substring": (_substring, True),
    "left": (lambda v, n: v[: int(n)], True),
    "right": (lambda v, n: v[-int(n) :] if int(n) else "", True),
    "timestamp": (lambda: int(datetime.now(UTC).timestamp() * 1000), False),
    **CONVERSIONS,
}


def call_scalar(name: str, args: list[Any]) -> Any:
    found = SCALARS.get(name)
    if found is None:
        raise Unsupported(f"the function {name}() is not supported on the embedded store")
    fn, strict = found
    if strict and any(a is None for a in args):
        return None
    try:
        return fn(*args)
    except (TypeError, AttributeError, ValueError) as exc:
        raise CypherTypeError(f"{name}() cannot take {', '.join(_kind(a) for a in args)}: {exc}") from None
