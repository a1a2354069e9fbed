"""Cypher's conversion functions, as Neo4j 5 has them: `toBoolean`, `toInteger`,
`toFloat` and `toString` (an error for a value of a kind they do not convert, null for
text they cannot read), their `…OrNull` forms (null for anything they cannot convert),
and the `…List` forms over a list."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dagmca.store.embedded import temporal
from dagmca.store.embedded.operators import CypherTypeError
from dagmca.store.embedded.temporal import Duration, Temporal

_INVALID = object()  # a value of a kind the function does not convert


def _boolean(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return {"true": True, "false": False}.get(v.strip().lower())
    if isinstance(v, int):
        return v != 0
    return _INVALID


def _integer(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if math.isfinite(v) else _INVALID
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            number = _float(v)
            return int(number) if isinstance(number, float) and math.isfinite(number) else None
    return _INVALID


def _float(v: Any) -> Any:
    if isinstance(v, bool):
        return _INVALID
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return _INVALID


def _string(v: Any) -> Any:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, Temporal | Duration):
        return temporal.text(v)
    return _INVALID


def _strict(name: str, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        found = convert(v)
        if found is _INVALID:
            raise CypherTypeError(f"{name}() cannot convert a {type(v).__name__}")
        return found

    return fn


def _or_null(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if (found := convert(v)) is _INVALID else found


def _each(name: str, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        if not isinstance(v, list):
            raise CypherTypeError(f"{name}() takes a list, not a {type(v).__name__}")
        return [None if x is None or (found := convert(x)) is _INVALID else found for x in v]

    return fn


# name: (function, null in gives null out), as functions.SCALARS keeps them
CONVERSIONS: dict[str, tuple[Callable[..., Any], bool]] = {}
for _name, _convert in (("Boolean", _boolean), ("Integer", _integer), ("Float", _float), ("String", _string)):
    CONVERSIONS[f"to{_name.lower()}"] = (_strict(f"to{_name}", _convert), True)
    CONVERSIONS[f"to{_name.lower()}ornull"] = (_or_null(_convert), True)
    CONVERSIONS[f"to{_name.lower()}list"] = (_each(f"to{_name}List", _convert), True)
