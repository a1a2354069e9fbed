"""The temporal functions of Cypher, by their lower-case names: the constructors
(`date(…)`, `datetime.fromepoch(…)`, the `.statement`, `.transaction` and `.realtime`
clocks), truncation, `duration(…)` and the `duration.between` family. Each takes the
statement's time first: every call in one statement reads the same clock, as in Neo4j."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagmca.store.embedded.temporal import build, durations, truncate
from dagmca.store.embedded.temporal import text as parse
from dagmca.store.embedded.temporal.values import (
    NANOS_PER_SECOND,
    DateTime,
    Duration,
    TemporalError,
    from_epoch,
)

TemporalFn = Callable[..., Any]


def _maker(kind: str) -> TemporalFn:
    def make(now: DateTime, arg: Any = build.NOW, *rest: Any) -> Any:
        if rest:
            raise TemporalError(f"{kind}() takes one argument")
        return build.make(kind, arg, now)

    return make


def _clock(kind: str, realtime: bool) -> TemporalFn:
    def clock(now: DateTime, zone: Any = build.NOW) -> Any:
        if zone is None:
            return None
        when = build.statement_now() if realtime else now
        if zone is not build.NOW:
            when = from_epoch(when.epoch_nanos, parse.zone(str(zone)))
        return build.convert(kind, when)

    return clock


def _truncator(kind: str) -> TemporalFn:
    def cut(now: DateTime, unit: Any, value: Any = None, fields: Any = None) -> Any:
        return truncate.truncate(kind, unit, value, fields)

    return cut


def _duration(now: DateTime, arg: Any) -> Any:
    if arg is None:
        return None
    if isinstance(arg, str):
        return parse.parse_duration(arg)
    if isinstance(arg, dict):
        return durations.from_map(arg)
    if isinstance(arg, Duration):
        return arg
    raise TemporalError(f"duration() takes a text or a map, not {type(arg).__name__}")


def _between(unit: str) -> TemporalFn:
    return lambda now, a, b: durations.between(unit, a, b)


def _from_epoch(now: DateTime, seconds: Any, nanos: Any = 0) -> Any:
    if seconds is None or nanos is None:
        return None
    return from_epoch(int(seconds) * NANOS_PER_SECOND + int(nanos), build.DEFAULT_ZONE)


def _from_epoch_millis(now: DateTime, millis: Any) -> Any:
    return None if millis is None else from_epoch(int(millis) * 1_000_000, build.DEFAULT_ZONE)


TEMPORAL: dict[str, TemporalFn] = {
    "duration": _duration,
    "duration.between": _between("between"),
    "duration.inmonths": _between("inMonths"),
    "duration.indays": _between("inDays"),
    "duration.inseconds": _between("inSeconds"),
    "datetime.fromepoch": _from_epoch,
    "datetime.fromepochmillis": _from_epoch_millis,
}
for _kind in build.KINDS:
    TEMPORAL[_kind] = _maker(_kind)
    TEMPORAL[f"{_kind}.truncate"] = _truncator(_kind)
    TEMPORAL[f"{_kind}.statement"] = _clock(_kind, realtime=False)
    TEMPORAL[f"{_kind}.transaction"] = _clock(_kind, realtime=False)
    TEMPORAL[f"{_kind}.realtime"] = _clock(_kind, realtime=True)
