"""Cypher's scalar functions and operators over the engine's values, with null in,
null out, as Neo4j 5 has them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from dagmca.store.embedded import temporal
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported
from dagmca.store.embedded.temporal import Duration, Temporal
from dagmca.store.embedded.values import Node, Path, Rel, compare, equals

AGGREGATES = frozenset(
    {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont", "percentiledisc"}
)


class CypherTypeError(CypherSyntaxError):
    """A value of the wrong kind for an operator or a function."""


def _kind(v: Any) -> str:
    return type(v).__name__


def add(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, list) or isinstance(b, list):
        return (a if isinstance(a, list) else [a]) + (b if isinstance(b, list) else [b])
    texts = isinstance(a, str | int | float) and isinstance(b, str | int | float)
    if texts and (isinstance(a, str) or isinstance(b, str)):
        return f"{a}{b}"
    if isinstance(a, Temporal | Duration) or isinstance(b, Temporal | Duration):
        return temporal.add(a, b)
    return _numeric("+", a, b, lambda x, y: x + y)


def subtract(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, Temporal | Duration) or isinstance(b, Temporal | Duration):
        return temporal.subtract(a, b)
    return _numeric("-", a, b, lambda x, y: x - y)


def multiply(a: Any, b: Any) -> Any:
    if isinstance(a, Duration) or isinstance(b, Duration):
        return None if a is None or b is None else temporal.multiply(a, b)
    return _numeric("*", a, b, lambda x, y: x * y)


def divide(a: Any, b: Any) -> Any:
    if isinstance(a, Duration) or isinstance(b, Duration):
        return None if a is None or b is None else temporal.divide(a, b)

    def div(x: Any, y: Any) -> Any:
        if isinstance(x, int) and isinstance(y, int):
            if y == 0:
                raise CypherTypeError("/ by zero")
            q = abs(x) // abs(y)
            return q if (x >= 0) == (y >= 0) else -q
        if y == 0:
            return math.nan if x == 0 else math.copysign(math.inf, x) * math.copysign(1, y)
        return x / y

    return _numeric("/", a, b, div)


def modulo(a: Any, b: Any) -> Any:
    def mod(x: Any, y: Any) -> Any:
        if isinstance(x, int) and isinstance(y, int):
            if y == 0:
                raise CypherTypeError("% by zero")
            return int(math.fmod(x, y))
        return math.fmod(x, y) if y != 0 else math.nan

    return _numeric("%", a, b, mod)


def _numeric(op: str, a: Any, b: Any, fn: Callable[[Any, Any], Any]) -> Any:
    if a is None or b is None:
        return None
    ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    if not ok:
        raise CypherTypeError(f"cannot apply {op} to {_kind(a)} and {_kind(b)}")
    return fn(a, b)


def concatenate(a: Any, b: Any) -> Any:
    """`a || b`: two strings, or two lists, joined."""
    if a is None or b is None:
        return None
    if isinstance(a, str) and isinstance(b, str):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    raise CypherTypeError(f"cannot apply || to {_kind(a)} and {_kind(b)}")


ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "||": concatenate,
    "+": add,
    "-": subtract,
    "*": multiply,
    "/": divide,
    "%": modulo,
    "^": lambda a, b: _numeric("^", a, b, lambda x, y: float(x) ** float(y)),
}


def _cmp(test: Callable[[int], bool]) -> Callable[[Any, Any], bool | None]:
    def op(a: Any, b: Any) -> bool | None:
        c = compare(a, b)
        return None if c is None else test(c)

    return op


def _not_equal(a: Any, b: Any) -> bool | None:
    e = equals(a, b)
    return None if e is None else not e


def _in(a: Any, b: Any) -> bool | None:
    if b is None:
        return None
    if not isinstance(b, list):
        raise CypherTypeError(f"IN needs a list, not {_kind(b)}")
    unknown = False
    for x in b:
        e = equals(a, x)
        if e:
            return True
        unknown = unknown or e is None
    return None if unknown else False


def _strings(test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool | None]:
    def op(a: Any, b: Any) -> bool | None:
        return test(a, b) if isinstance(a, str) and isinstance(b, str) else None

    return op


def _regex(a: Any, b: Any) -> bool | None:
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return re.fullmatch(b, a, re.DOTALL) is not None


COMPARISONS: dict[str, Callable[[Any, Any], bool | None]] = {
    "=": equals,
    "<>": _not_equal,
    "<": _cmp(lambda c: c < 0),
    ">": _cmp(lambda c: c > 0),
    "<=": _cmp(lambda c: c <= 0),
    ">=": _cmp(lambda c: c >= 0),
    "in": _in,
    "contains": _strings(lambda a, b: b in a),
    "starts with": _strings(lambda a, b: a.startswith(b)),
    "ends with": _strings(lambda a, b: a.endswith(b)),
    "=~": _regex,
}


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


def _to_int(v: Any) -> Any:
    try:
        return int(float(v)) if isinstance(v, str) else int(v)
    except (TypeError, ValueError):
        return None


def _to_float(v: Any) -> Any:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _to_string(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Temporal | Duration):
        return temporal.text(v)
    return str(v)


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
    "tointeger": (_to_int, True),
    "tofloat": (_to_float, True),
    "tostring": (_to_string, True),
    "toboolean": (lambda v: {"true": True, "false": False}.get(str(v).lower()), True),
    "tolower": (lambda v: v.lower(), True),
    "toupper": (lambda v: v.upper(), True),
    "trim": (lambda v: v.strip(), True),
    "ltrim": (lambda v: v.lstrip(), True),
    "rtrim": (lambda v: v.rstrip(), True),
    "replace": (lambda v, a, b: v.replace(a, b), True),
    "split": (lambda v, sep: v.split(sep), True),
    "substring": (_substring, True),
    "left": (lambda v, n: v[: int(n)], True),
    "right": (lambda v, n: v[-int(n) :] if int(n) else "", True),
    "timestamp": (lambda: int(datetime.now(UTC).timestamp() * 1000), False),
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
