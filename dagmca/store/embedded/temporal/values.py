"""Cypher's temporal values as Neo4j has them: DATE, LOCAL TIME, ZONED TIME, LOCAL DATETIME,
ZONED DATETIME and DURATION, to the nanosecond (the standard library's datetime stops at
the microsecond, so a value keeps its nanoseconds of the day beside a `date`), with
Neo4j's equality, order and text.

A zoned value's zone is a `datetime.timezone` (a fixed offset) or a `zoneinfo.ZoneInfo`
(a named zone, whose offset depends on the instant); the standard library computes the
offsets, the calendar and the week dates."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo

from dagmca.store.embedded.syntax import CypherSyntaxError

NANOS_PER_SECOND = 1_000_000_000
SECONDS_PER_DAY = 86_400
NANOS_PER_DAY = SECONDS_PER_DAY * NANOS_PER_SECOND
# Neo4j's average month (365.2425 days / 12), for fractions of months and for ordering
SECONDS_PER_MONTH = 2_629_746
_EPOCH = date(1970, 1, 1).toordinal()
_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TemporalError(CypherSyntaxError):
    """A temporal value that cannot be made: bad text, a field out of range, a zone that
    does not exist, a date outside the years 1 to 9999."""


class Temporal:
    """An instant or a calendar value (not a duration). `type_name` is Neo4j's name of its
    type, as type predicates and messages use it."""

    __slots__ = ()
    type_name = ""


@dataclass(frozen=True, slots=True)
class Date(Temporal):
    date: date
    type_name = "DATE"


@dataclass(frozen=True, slots=True)
class LocalTime(Temporal):
    nanos: int  # of the day
    type_name = "LOCAL TIME"


@dataclass(frozen=True, slots=True)
class Time(Temporal):
    nanos: int  # of the day, local
    offset: int  # seconds east of UTC
    type_name = "ZONED TIME"


@dataclass(frozen=True, slots=True)
class LocalDateTime(Temporal):
    date: date
    nanos: int  # of the day
    type_name = "LOCAL DATETIME"


@dataclass(frozen=True, slots=True)
class DateTime(Temporal):
    """A local date and time in `zone`, whose offset there is `offset` seconds."""

    date: date
    nanos: int  # of the day, local
    zone: tzinfo
    offset: int
    type_name = "ZONED DATETIME"

    @property
    def epoch_nanos(self) -> int:
        return (self.date.toordinal() - _EPOCH) * NANOS_PER_DAY + self.nanos - self.offset * NANOS_PER_SECOND


@dataclass(frozen=True, slots=True)
class Duration:
    """Months, days, and seconds with nanoseconds, kept apart as Neo4j keeps them (a month
    has no fixed number of days, nor a day of seconds across a change of clocks);
    0 <= nanos < 10⁹."""

    months: int
    days: int
    seconds: int
    nanos: int
    type_name = "DURATION"

    @classmethod
    def of(cls, months: int = 0, days: int = 0, seconds: int = 0, nanos: int = 0) -> Duration:
        carry, nanos = divmod(nanos, NANOS_PER_SECOND)
        return cls(months, days, seconds + carry, nanos)

    @property
    def total_nanos(self) -> int:
        return self.seconds * NANOS_PER_SECOND + self.nanos


def approximate(
    months: Fraction | int, days: Fraction | int, seconds: Fraction | int, nanos: Fraction | int
) -> Duration:
    """A duration from fractional parts, as Neo4j makes one: a fraction of a month moves
    to days (an average month), of a day to seconds, of a second to nanoseconds; each
    part truncated toward zero."""
    months, days, seconds, nanos = Fraction(months), Fraction(days), Fraction(seconds), Fraction(nanos)
    whole_months = int(months)
    days += (months - whole_months) * SECONDS_PER_MONTH / SECONDS_PER_DAY
    whole_days = int(days)
    seconds += (days - whole_days) * SECONDS_PER_DAY
    whole_seconds = int(seconds)
    nanos += (seconds - whole_seconds) * NANOS_PER_SECOND
    return Duration.of(whole_months, whole_days, whole_seconds, int(nanos))


# -- building ------------------------------------------------------------------------
def fixed_zone(seconds: int) -> tzinfo:
    return UTC if seconds == 0 else timezone(timedelta(seconds=seconds))


def offset_at(zone: tzinfo, day: date, nanos: int) -> tuple[date, int, int]:
    """The local date and time as they are in `zone` (a time in a gap of the clocks moves
    later by the gap, as in Neo4j), and the offset there."""
    if isinstance(zone, timezone):
        delta = zone.utcoffset(None)
        return day, nanos, int(delta.total_seconds())
    local = datetime.combine(day, datetime.min.time()) + timedelta(seconds=nanos // NANOS_PER_SECOND)
    offset = local.replace(tzinfo=zone).utcoffset()
    assert offset is not None
    instant = (local - offset).replace(tzinfo=UTC).astimezone(zone)
    if instant.replace(tzinfo=None) != local:  # in a gap: where the instant really is
        moved = instant.replace(tzinfo=None)
        nanos = nanos % NANOS_PER_SECOND + _seconds_of_day(moved) * NANOS_PER_SECOND
        return moved.date(), nanos, int(instant.utcoffset().total_seconds())  # type: ignore[union-attr]
    return day, nanos, int(offset.total_seconds())


def zoned(day: date, nanos: int, zone: tzinfo) -> DateTime:
    """A local date and time in a zone."""
    day, nanos, offset = offset_at(zone, day, nanos)
    return DateTime(day, nanos, zone, offset)


def from_epoch(epoch_nanos: int, zone: tzinfo) -> DateTime:
    """The instant `epoch_nanos` (since 1970 in UTC) as it is in `zone`."""
    seconds, nanos = divmod(epoch_nanos, NANOS_PER_SECOND)
    local = (_UTC_EPOCH + timedelta(seconds=seconds)).astimezone(zone)
    offset = local.utcoffset()
    assert offset is not None
    return DateTime(
        local.date(), _seconds_of_day(local) * NANOS_PER_SECOND + nanos, zone, int(offset.total_seconds())
    )


def from_python(when: datetime) -> DateTime | LocalDateTime:
    """A standard library datetime (a stored timestamp) as a temporal value."""
    nanos = _seconds_of_day(when) * NANOS_PER_SECOND + when.microsecond * 1000
    if when.tzinfo is None:
        return LocalDateTime(when.date(), nanos)
    offset = when.utcoffset()
    assert offset is not None
    return DateTime(when.date(), nanos, when.tzinfo, int(offset.total_seconds()))


def _seconds_of_day(when: datetime) -> int:
    return when.hour * 3600 + when.minute * 60 + when.second


def to_python(v: DateTime | LocalDateTime) -> datetime:
    """The value as a standard library datetime (to the microsecond)."""
    seconds, nanos = divmod(v.nanos, NANOS_PER_SECOND)
    naive = datetime.combine(v.date, datetime.min.time()) + timedelta(
        seconds=seconds, microseconds=nanos // 1000
    )
    return naive.replace(tzinfo=v.zone) if isinstance(v, DateTime) else naive


# -- order -------------------------------------------------------------------------------
def order_key(v: Temporal | Duration) -> tuple[Any, ...]:
    """What `<` compares between two values of one type: a zoned value by its instant
    first. Durations have no `<`; ORDER BY sorts them by their average length."""
    if isinstance(v, Date):
        return (v.date,)
    if isinstance(v, LocalTime):
        return (v.nanos,)
    if isinstance(v, Time):
        return (v.nanos - v.offset * NANOS_PER_SECOND, v.nanos)
    if isinstance(v, LocalDateTime):
        return (v.date, v.nanos)
    if isinstance(v, DateTime):
        return (v.epoch_nanos, v.date, v.nanos, zone_id(v.zone))
    assert isinstance(v, Duration)
    return (
        (v.months * SECONDS_PER_MONTH + v.days * SECONDS_PER_DAY + v.seconds) * NANOS_PER_SECOND + v.nanos,
    )


def compare(a: Any, b: Any) -> int | None:
    """-1, 0 or 1 for two values of one temporal type; None for durations and mixed types."""
    if type(a) is not type(b) or isinstance(a, Duration):
        return None
    x, y = order_key(a), order_key(b)
    return (x > y) - (x < y)


# ORDER BY's order among the temporal types (ascending), as Neo4j sorts them
SORT_RANK = {DateTime: 0, LocalDateTime: 1, Date: 2, Time: 3, LocalTime: 4, Duration: 5}


# -- text ----------------------------------------------------------------------------------
def zone_id(zone: tzinfo) -> str:
    """A zone as Neo4j names it: `Europe/Stockholm`, or an offset (`+01:00`, `Z`)."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    delta = zone.utcoffset(None)
    return offset_text(int(delta.total_seconds()) if delta is not None else 0)


def offset_text(seconds: int) -> str:
    if seconds == 0:
        return "Z"
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def time_text(nanos: int) -> str:
    """`HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff` (3, 6 or 9 digits): the shortest that keeps
    the value, as Neo4j writes a time."""
    seconds, fraction = divmod(nanos, NANOS_PER_SECOND)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = f"{hours:02d}:{minutes:02d}"
    if secs or fraction:
        out += f":{secs:02d}"
    if fraction:
        digits = f"{fraction:09d}"
        out += "." + (
            digits[:3] if fraction % 1_000_000 == 0 else digits[:6] if fraction % 1000 == 0 else digits
        )
    return out


def date_text(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


def text(v: Temporal | Duration) -> str:
    """The value as Neo4j's toString() writes it."""
    if isinstance(v, Date):
        return date_text(v.date)
    if isinstance(v, LocalTime):
        return time_text(v.nanos)
    if isinstance(v, Time):
        return time_text(v.nanos) + offset_text(v.offset)
    if isinstance(v, LocalDateTime):
        return f"{date_text(v.date)}T{time_text(v.nanos)}"
    if isinstance(v, DateTime):
        named = f"[{v.zone.key}]" if isinstance(v.zone, ZoneInfo) else ""
        return f"{date_text(v.date)}T{time_text(v.nanos)}{offset_text(v.offset)}{named}"
    assert isinstance(v, Duration)
    return duration_text(v)


def duration_text(d: Duration) -> str:
    """ISO 8601 as Neo4j writes a duration: each part with its own sign (`PT-1M-0.001S`)."""
    out = "P"
    years, months = _java_divmod(d.months, 12)
    out += f"{years}Y" if years else ""
    out += f"{months}M" if months else ""
    out += f"{d.days}D" if d.days else ""
    seconds, nanos = d.seconds, d.nanos
    if seconds or nanos:
        if seconds < 0 and nanos:  # the fraction takes the sign of the seconds
            seconds, nanos = seconds + 1, nanos - NANOS_PER_SECOND
        hours, seconds = _java_divmod(seconds, 3600)
        minutes, seconds = _java_divmod(seconds, 60)
        out += "T" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
        if seconds or nanos:
            sign = "-" if seconds < 0 or nanos < 0 else ""
            fraction = f"{abs(nanos):09d}".rstrip("0")
            out += f"{sign}{abs(seconds)}" + (f".{fraction}" if fraction else "") + "S"
    return out if len(out) > 1 else "PT0S"


def _java_divmod(a: int, b: int) -> tuple[int, int]:
    """Division truncated toward zero, and its remainder (the sign of `a`)."""
    q = abs(a) // b * (1 if a >= 0 else -1)
    return q, a - q * b
