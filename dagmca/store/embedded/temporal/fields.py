"""The components a temporal value or a duration gives as properties (`d.year`,
`t.epochSeconds`, `dur.minutesOfHour`), named as in Neo4j (case does not matter)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from dagmca.store.embedded.temporal.values import (
    NANOS_PER_SECOND,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    Time,
    offset_text,
    zone_id,
)


def _quarter(d: date) -> int:
    return (d.month - 1) // 3 + 1


def day_of_quarter(d: date) -> int:
    return d.toordinal() - date(d.year, 3 * (_quarter(d) - 1) + 1, 1).toordinal() + 1


_DATE: dict[str, Callable[[date], int]] = {
    "year": lambda d: d.year,
    "quarter": _quarter,
    "month": lambda d: d.month,
    "week": lambda d: d.isocalendar()[1],
    "weekyear": lambda d: d.isocalendar()[0],
    "day": lambda d: d.day,
    "ordinalday": lambda d: d.timetuple().tm_yday,
    "weekday": lambda d: d.isoweekday(),
    "dayofweek": lambda d: d.isoweekday(),
    "dayofquarter": day_of_quarter,
}
_TIME: dict[str, Callable[[int], int]] = {
    "hour": lambda n: n // (3600 * NANOS_PER_SECOND),
    "minute": lambda n: n // (60 * NANOS_PER_SECOND) % 60,
    "second": lambda n: n // NANOS_PER_SECOND % 60,
    "millisecond": lambda n: n % NANOS_PER_SECOND // 1_000_000,
    "microsecond": lambda n: n % NANOS_PER_SECOND // 1000,
    "nanosecond": lambda n: n % NANOS_PER_SECOND,
}


def _trunc(a: int, b: int) -> int:
    """Java's integer division: toward zero."""
    return abs(a) // b * (1 if a >= 0 else -1)


def _rem(a: int, b: int) -> int:
    return a - _trunc(a, b) * b


_DURATION: dict[str, Callable[[Duration], int]] = {
    "years": lambda d: _trunc(d.months, 12),
    "quarters": lambda d: _trunc(d.months, 3),
    "months": lambda d: d.months,
    "weeks": lambda d: _trunc(d.days, 7),
    "days": lambda d: d.days,
    "hours": lambda d: _trunc(d.seconds, 3600),
    "minutes": lambda d: _trunc(d.seconds, 60),
    "seconds": lambda d: d.seconds,
    "milliseconds": lambda d: d.seconds * 1000 + d.nanos // 1_000_000,
    "microseconds": lambda d: d.seconds * 1_000_000 + d.nanos // 1000,
    "nanoseconds": lambda d: d.seconds * NANOS_PER_SECOND + d.nanos,
    "quartersofyear": lambda d: _rem(_trunc(d.months, 3), 4),
    "monthsofquarter": lambda d: _rem(d.months, 3),
    "monthsofyear": lambda d: _rem(d.months, 12),
    "daysofweek": lambda d: _rem(d.days, 7),
    "minutesofhour": lambda d: _rem(_trunc(d.seconds, 60), 60),
    "secondsofminute": lambda d: _rem(d.seconds, 60),
    "millisecondsofsecond": lambda d: d.nanos // 1_000_000,
    "microsecondsofsecond": lambda d: d.nanos // 1000,
    "nanosecondsofsecond": lambda d: d.nanos,
}


def component(v: Temporal | Duration, name: str) -> Any:
    """`v.name`; KeyError when the value has no such component."""
    key = name.lower()
    if isinstance(v, Duration):
        return _DURATION[key](v)
    if isinstance(v, Date | LocalDateTime | DateTime) and key in _DATE:
        return _DATE[key](v.date)
    if isinstance(v, LocalTime | Time | LocalDateTime | DateTime) and key in _TIME:
        return _TIME[key](v.nanos)
    if isinstance(v, Time | DateTime):
        if key == "timezone":
            return zone_id(v.zone) if isinstance(v, DateTime) else offset_text(v.offset)
        if key == "offset":
            return offset_text(v.offset)
        if key == "offsetminutes":
            return v.offset // 60
        if key == "offsetseconds":
            return v.offset
    if isinstance(v, DateTime) and key in ("epochseconds", "epochmillis"):
        epoch = v.epoch_nanos
        return epoch // NANOS_PER_SECOND if key == "epochseconds" else epoch // 1_000_000
    raise KeyError(name)
