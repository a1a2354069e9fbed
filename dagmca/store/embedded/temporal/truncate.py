"""`date.truncate(unit, value, fields)` and its kin for the other temporal types: the
value cut down to the start of the unit (a millennium to a microsecond), then the
fields of the map applied, as Neo4j truncates."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from dagmca.store.embedded.temporal import build
from dagmca.store.embedded.temporal import text as parse
from dagmca.store.embedded.temporal.values import (
    NANOS_PER_SECOND,
    Date,
    DateTime,
    LocalDateTime,
    LocalTime,
    Temporal,
    TemporalError,
    Time,
    zoned,
)

_DATE_UNITS = ("millennium", "century", "decade", "year", "weekyear", "quarter", "month", "week", "day")
# a time unit: its length in nanoseconds
_TIME_UNITS = {
    "hour": 3600 * NANOS_PER_SECOND,
    "minute": 60 * NANOS_PER_SECOND,
    "second": NANOS_PER_SECOND,
    "millisecond": 1_000_000,
    "microsecond": 1000,
}


def _date(unit: str, day: date) -> date:
    if unit in ("millennium", "century", "decade"):
        size = {"millennium": 1000, "century": 100, "decade": 10}[unit]
        return date(max(day.year // size * size, 1), 1, 1)
    if unit == "year":
        return date(day.year, 1, 1)
    if unit == "weekyear":
        return date.fromisocalendar(day.isocalendar()[0], 1, 1)
    if unit == "quarter":
        return date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
    if unit == "month":
        return day.replace(day=1)
    if unit == "week":
        return day - timedelta(days=day.weekday())
    return day


def truncate(kind: str, unit: Any, value: Any, fields: Any = None) -> Any:
    """`kind.truncate(unit, value, fields)`."""
    if unit is None or value is None:
        return None
    if not isinstance(unit, str) or not isinstance(value, Temporal):
        raise TemporalError(f"{kind}.truncate() takes a unit and a temporal value")
    key = unit.lower()
    time_unit = key in _TIME_UNITS
    if key not in _DATE_UNITS and not time_unit:
        raise TemporalError(f"{kind}.truncate() cannot truncate to {unit!r}")
    if time_unit and kind == "date":
        raise TemporalError(f"a date cannot be truncated to the {unit}")
    day = value.date if isinstance(value, Date | LocalDateTime | DateTime) else None
    nanos = value.nanos if isinstance(value, LocalTime | Time | LocalDateTime | DateTime) else 0
    if day is None and kind not in ("time", "localtime"):
        raise TemporalError(f"{kind}.truncate() needs a value with a date")
    if kind in ("time", "localtime") and not time_unit and key != "day":
        raise TemporalError(f"a time cannot be truncated to the {unit}")
    if time_unit:
        nanos -= nanos % _TIME_UNITS[key]
    else:
        day, nanos = (_date(key, day) if day else None), 0
    extra = {str(k).lower(): v for k, v in (fields or {}).items()}
    zone = parse.zone(extra.pop("timezone")) if "timezone" in extra else None
    # sub-second fields finer than the unit add to what the truncation kept
    sub = sum(
        extra.pop(k) * n
        for k, n in (("millisecond", 1_000_000), ("microsecond", 1000), ("nanosecond", 1))
        if k in extra
    )
    nanos += sub
    if kind == "date":
        assert day is not None
        return (
            build.from_map("date", {**extra, "date": Date(day)}, build.statement_now())
            if extra
            else Date(day)
        )
    if kind == "localtime":
        return build.from_map("localtime", {**extra, "time": LocalTime(nanos)}, build.statement_now())
    if kind == "time":
        offset = value.offset if isinstance(value, Time | DateTime) else 0
        t = build.from_map("time", {**extra, "time": Time(nanos, offset)}, build.statement_now())
        return (
            build.convert("time", LocalTime(t.nanos), zone) if zone is not None and isinstance(t, Time) else t
        )
    assert day is not None
    local = build.from_map(
        "localdatetime", {**extra, "datetime": LocalDateTime(day, nanos)}, build.statement_now()
    )
    assert isinstance(local, LocalDateTime)
    if kind == "localdatetime":
        return local
    where = zone or (value.zone if isinstance(value, DateTime) else build.DEFAULT_ZONE)
    return zoned(local.date, local.nanos, where)
