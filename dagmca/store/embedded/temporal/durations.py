"""Durations as Neo4j makes and computes them: from a map of units (fractions spread to
the smaller units), added, subtracted, multiplied and divided, and measured between two
temporal values (`duration.between`, `inMonths`, `inDays`, `inSeconds`)."""

from __future__ import annotations

import calendar
from datetime import date, timedelta, tzinfo
from fractions import Fraction
from typing import Any

from dagmca.store.embedded.temporal.values import (
    NANOS_PER_DAY,
    NANOS_PER_SECOND,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    TemporalError,
    Time,
    approximate,
    fixed_zone,
    from_epoch,
    offset_at,
)

# unit: (part, how many of the part's unit one is)
_UNITS: dict[str, tuple[str, int]] = {
    "years": ("months", 12),
    "quarters": ("months", 3),
    "months": ("months", 1),
    "weeks": ("days", 7),
    "days": ("days", 1),
    "hours": ("seconds", 3600),
    "minutes": ("seconds", 60),
    "seconds": ("seconds", 1),
    "milliseconds": ("nanos", 1_000_000),
    "microseconds": ("nanos", 1000),
    "nanoseconds": ("nanos", 1),
}


def from_map(m: dict[str, Any]) -> Duration:
    """`duration({days: 14, hours: 16})`; a fraction of a unit spreads to the smaller ones."""
    parts = {"months": Fraction(0), "days": Fraction(0), "seconds": Fraction(0), "nanos": Fraction(0)}
    for key, value in m.items():
        unit = _UNITS.get(str(key).lower())
        if unit is None:
            raise TemporalError(f"duration() cannot take the field {key!r}")
        if value is None:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise TemporalError(f"the field {key!r} of a duration takes a number, not {value!r}")
        parts[unit[0]] += Fraction(value) * unit[1]
    return approximate(parts["months"], parts["days"], parts["seconds"], parts["nanos"])


def add(a: Duration, b: Duration, sign: int = 1) -> Duration:
    return Duration.of(
        a.months + sign * b.months,
        a.days + sign * b.days,
        a.seconds + sign * b.seconds,
        a.nanos + sign * b.nanos,
    )


def scale(d: Duration, factor: int | float, *, divide: bool = False) -> Duration:
    """`d * factor` (exact for a whole number) or `d / factor` (spread as a fraction is)."""
    if divide:
        if factor == 0:
            raise TemporalError("cannot divide a duration by zero")
        f = 1 / Fraction(factor)
    elif isinstance(factor, int):
        return Duration.of(d.months * factor, d.days * factor, d.seconds * factor, d.nanos * factor)
    else:
        f = Fraction(factor)
    return approximate(d.months * f, d.days * f, d.seconds * f, d.nanos * f)


def plus_months(day: date, months: int) -> date:
    if not months:
        return day
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    try:
        return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))
    except (ValueError, calendar.IllegalMonthError):
        raise TemporalError("the date falls outside the years 1 to 9999") from None


# -- between ------------------------------------------------------------------------------------
class _Point:
    """A temporal value as `between` reads it: a date (or none), a time of day, a zone
    (or none: a local value)."""

    def __init__(self, v: Temporal) -> None:
        self.day: date | None = v.date if isinstance(v, Date | LocalDateTime | DateTime) else None
        self.nanos: int = v.nanos if isinstance(v, LocalTime | Time | LocalDateTime | DateTime) else 0
        self.zone: tzinfo | None = (
            v.zone if isinstance(v, DateTime) else fixed_zone(v.offset) if isinstance(v, Time) else None
        )

    def local(self) -> int:
        assert self.day is not None
        return self.day.toordinal() * NANOS_PER_DAY + self.nanos

    def instant(self) -> int:
        """Nanoseconds since year 1 in UTC (a local value: as if UTC)."""
        if self.zone is None:
            return self.local()
        assert self.day is not None
        day, nanos, offset = offset_at(self.zone, self.day, self.nanos)
        return day.toordinal() * NANOS_PER_DAY + nanos - offset * NANOS_PER_SECOND


def between(unit: str, a: Any, b: Any) -> Duration | None:
    """The duration from `a` to `b`: in months, days and the rest (`unit` between), or
    in one unit (months, days, seconds). A value with no date is taken on the other's
    date, and a local value in the other's zone, as Neo4j does."""
    if a is None or b is None:
        return None
    if not isinstance(a, Temporal) or not isinstance(b, Temporal):
        raise TemporalError(f"duration.{unit}() takes two temporal values")
    start, end = _Point(a), _Point(b)
    dated = start.day is not None and end.day is not None
    start.day = start.day or end.day or date(1970, 1, 1)
    end.day = end.day or start.day
    start.zone = start.zone or end.zone
    end.zone = end.zone or start.zone
    if unit == "inSeconds" or not dated:
        nanos = end.instant() - start.instant() if unit != "inMonths" and unit != "inDays" else 0
        return Duration.of(nanos=nanos)
    if start.zone is not None:  # dates are compared in the start's zone
        moved = from_epoch(_epoch(end), start.zone)
        end = _Point(moved)
    if unit == "inMonths":
        return Duration.of(months=_months(start, end))
    if unit == "inDays":
        return Duration.of(days=_days(start, end))
    months = _months(start, end)
    start = _plus_months(start, months)
    days = _days(start, end)
    assert start.day is not None
    start.day += timedelta(days=days)
    return Duration.of(months, days, 0, end.instant() - start.instant())


def _epoch(p: _Point) -> int:
    return p.instant() - date(1970, 1, 1).toordinal() * NANOS_PER_DAY


def _end_date(start: _Point, end: _Point) -> date:
    """The end's date, a day nearer when its time of day has not come round yet."""
    assert start.day is not None and end.day is not None
    if end.day > start.day and end.nanos < start.nanos:
        return end.day - timedelta(days=1)
    if end.day < start.day and end.nanos > start.nanos:
        return end.day + timedelta(days=1)
    return end.day


def _months(start: _Point, end: _Point) -> int:
    assert start.day is not None
    finish = _end_date(start, end)
    span = (
        (finish.year * 12 + finish.month) * 32
        + finish.day
        - ((start.day.year * 12 + start.day.month) * 32 + start.day.day)
    )
    return abs(span) // 32 * (1 if span >= 0 else -1)


def _days(start: _Point, end: _Point) -> int:
    assert start.day is not None
    return _end_date(start, end).toordinal() - start.day.toordinal()


def _plus_months(p: _Point, months: int) -> _Point:
    assert p.day is not None
    p.day = plus_months(p.day, months)
    return p
