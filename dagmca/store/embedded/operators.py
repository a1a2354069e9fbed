"""Cypher's operators over the engine's values, with null in, null out, as Neo4j 5 has
them: arithmetic (on numbers, strings, lists, temporal values and durations), `||`,
comparisons and equality, IN, and the string predicates."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from dagmca.store.embedded import temporal
from dagmca.store.embedded.syntax import CypherSyntaxError
from dagmca.store.embedded.temporal import Duration, Temporal
from dagmca.store.embedded.values import compare, equals


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
