"""A duration added to (or taken from) a temporal value, as Neo4j adds one: the months
first (the day kept, or the month's last), then the days, then the seconds and
nanoseconds; a date takes only the whole days of the seconds, a time only the time of
day, and a zoned datetime adds months and days on its calendar and seconds on the
instant (so a day across a change of clocks is still a calendar day)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from dagmca.store.embedded.temporal import durations
from dagmca.store.embedded.temporal.durations import plus_months
from dagmca.store.embedded.temporal.values import (
    NANOS_PER_DAY,
    SECONDS_PER_DAY,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    TemporalError,
    Time,
    from_epoch,
    zoned,
)


def _shift(day: date, days: int) -> date:
    try:
        return day + timedelta(days=days)
    except OverflowError:
        raise TemporalError("the date falls outside the years 1 to 9999") from None


def plus(t: Temporal, d: Duration, sign: int = 1) -> Temporal:
    """`t + d` (or `t - d` with sign -1)."""
    months, days = sign * d.months, sign * d.days
    nanos = sign * d.total_nanos
    if isinstance(t, Date):
        whole_days = abs(d.seconds) // SECONDS_PER_DAY * (1 if d.seconds >= 0 else -1)
        return Date(_shift(plus_months(t.date, months), days + sign * whole_days))
    if isinstance(t, LocalTime):
        return LocalTime((t.nanos + nanos) % NANOS_PER_DAY)
    if isinstance(t, Time):
        return Time((t.nanos + nanos) % NANOS_PER_DAY, t.offset)
    if isinstance(t, LocalDateTime):
        day = _shift(plus_months(t.date, months), days)
        carry, rest = divmod(t.nanos + nanos, NANOS_PER_DAY)
        return LocalDateTime(_shift(day, carry), rest)
    assert isinstance(t, DateTime)
    on_calendar = zoned(_shift(plus_months(t.date, months), days), t.nanos, t.zone)
    if not nanos:
        return on_calendar
    return from_epoch(on_calendar.epoch_nanos + nanos, t.zone)


def add(a: Any, b: Any) -> Any:
    """`a + b` where either is a temporal value or a duration."""
    if isinstance(a, Duration) and isinstance(b, Duration):
        return durations.add(a, b)
    if isinstance(a, Temporal) and isinstance(b, Duration):
        return plus(a, b)
    if isinstance(a, Duration) and isinstance(b, Temporal):
        return plus(b, a)
    raise _mismatch("+", a, b)


def subtract(a: Any, b: Any) -> Any:
    if isinstance(a, Duration) and isinstance(b, Duration):
        return durations.add(a, b, -1)
    if isinstance(a, Temporal) and isinstance(b, Duration):
        return plus(a, b, -1)
    raise _mismatch("-", a, b)


def multiply(a: Any, b: Any) -> Any:
    if isinstance(a, Duration) and _number(b):
        return durations.scale(a, b)
    if isinstance(b, Duration) and _number(a):
        return durations.scale(b, a)
    raise _mismatch("*", a, b)


def divide(a: Any, b: Any) -> Any:
    if isinstance(a, Duration) and _number(b):
        return durations.scale(a, b, divide=True)
    raise _mismatch("/", a, b)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _mismatch(op: str, a: Any, b: Any) -> TemporalError:
    def name(v: Any) -> str:
        return getattr(v, "type_name", "") or type(v).__name__

    return TemporalError(f"cannot apply {op} to {name(a)} and {name(b)}")
