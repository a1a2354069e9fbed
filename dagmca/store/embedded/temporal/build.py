"""Temporal values made as Neo4j's constructors make them: `date(…)`, `localtime(…)`,
`time(…)`, `localdatetime(…)` and `datetime(…)` from nothing (the statement's clock),
from text, from another temporal value (the parts it has), or from a map of fields
(calendar, week, ordinal and quarter dates; time to the nanosecond; a zone), where
`date`, `time` and `datetime` keys select the fields of other values and the others
override them."""

from __future__ import annotations

from datetime import date, datetime, tzinfo
from typing import Any

from dagmca.store.embedded.temporal import text as parse
from dagmca.store.embedded.temporal.fields import day_of_quarter
from dagmca.store.embedded.temporal.values import (
    NANOS_PER_DAY,
    NANOS_PER_SECOND,
    Date,
    DateTime,
    LocalDateTime,
    LocalTime,
    Temporal,
    TemporalError,
    Time,
    fixed_zone,
    from_epoch,
    offset_at,
    zoned,
)

# The zone of a value made without one: Neo4j's default (db.temporal.timezone) is UTC.
DEFAULT_ZONE = fixed_zone(0)
KINDS = ("date", "localtime", "time", "localdatetime", "datetime")
_DATE_KEYS = frozenset({"year", "month", "day", "week", "dayofweek", "ordinalday", "quarter", "dayofquarter"})
_TIME_KEYS = frozenset({"hour", "minute", "second", "millisecond", "microsecond", "nanosecond"})
_FIELDS = {
    "date": _DATE_KEYS | {"date"},
    "localtime": _TIME_KEYS | {"time"},
    "time": _TIME_KEYS | {"time", "timezone"},
    "localdatetime": _DATE_KEYS | _TIME_KEYS | {"date", "time", "datetime"},
    "datetime": _DATE_KEYS | _TIME_KEYS | {"date", "time", "datetime", "timezone"},
}


NOW = object()  # no argument: the statement's time


def make(kind: str, arg: Any, now: DateTime) -> Temporal | None:
    """`kind(arg)`: the statement's time (`now`) when `arg` is NOW, null for null."""
    if arg is NOW:
        return convert(kind, now)
    if arg is None:
        return None
    if isinstance(arg, str):
        return _parsed(kind, arg)
    if isinstance(arg, Temporal):
        return convert(kind, arg)
    if isinstance(arg, dict):
        return from_map(kind, {str(k).lower(): v for k, v in arg.items()}, now)
    raise TemporalError(f"{kind}() takes a text, a map or a temporal value, not {type(arg).__name__}")


def _parsed(kind: str, text: str) -> Temporal:
    if kind == "date":
        return parse.parse_date(text)
    if kind == "localtime":
        return parse.parse_local_time(text)
    if kind == "time":
        return parse.parse_time(text, DEFAULT_ZONE)
    if kind == "localdatetime":
        return parse.parse_local_datetime(text)
    return parse.parse_datetime(text, DEFAULT_ZONE)


def convert(kind: str, v: Temporal, zone: tzinfo | None = None) -> Temporal:
    """The parts of `v` that a value of `kind` has; a zoned kind made from a local value
    gets `zone` (else the default), and a zoned value moved to `zone` keeps its instant."""
    day = v.date if isinstance(v, Date | LocalDateTime | DateTime) else None
    nanos = v.nanos if isinstance(v, LocalTime | Time | LocalDateTime | DateTime) else None
    if kind == "date":
        if day is None:
            raise TemporalError(f"cannot make a date of the time {v}")
        return Date(day)
    if kind == "localtime":
        return LocalTime(_need(nanos, v))
    if kind == "localdatetime":
        if day is None:
            raise TemporalError(f"cannot make a local datetime of the time {v}")
        return LocalDateTime(day, nanos or 0)
    if kind == "time":
        if isinstance(v, Time | DateTime):
            t = Time(v.nanos, v.offset)
            return t if zone is None else _time_in(t, zone)
        return _time_in(Time(_need(nanos, v), 0), zone or DEFAULT_ZONE, same_instant=False)
    if day is None:
        raise TemporalError(f"cannot make a datetime of the time {v}")
    if isinstance(v, DateTime):
        return v if zone is None else from_epoch(v.epoch_nanos, zone)
    return zoned(day, nanos or 0, zone or DEFAULT_ZONE)


def _need(nanos: int | None, v: Temporal) -> int:
    if nanos is None:
        raise TemporalError(f"cannot make a time of the date {v}")
    return nanos


def _time_in(t: Time, zone: tzinfo, *, same_instant: bool = True) -> Time:
    """A time in another zone: the same instant, or (a local time) the same clock."""
    _, _, offset = offset_at(zone, date.today(), t.nanos)
    if not same_instant:
        return Time(t.nanos, offset)
    return Time((t.nanos + (offset - t.offset) * NANOS_PER_SECOND) % NANOS_PER_DAY, offset)


# -- from a map of fields ---------------------------------------------------------------------
def from_map(kind: str, m: dict[str, Any], now: DateTime) -> Temporal:
    if set(m) == {"timezone"}:  # the time now, in a zone
        return convert(kind, from_epoch(now.epoch_nanos, parse.zone(_text(m["timezone"]))))
    if kind == "datetime" and ("epochseconds" in m or "epochmillis" in m):
        return _from_epoch_map(m)
    allowed = _FIELDS[kind]
    unknown = sorted(set(m) - allowed)
    if unknown:
        raise TemporalError(f"{kind}() cannot take the field {unknown[0]!r}")
    base_date = _base(m, "date") or _base(m, "datetime")
    base_time = _base(m, "time") or _base(m, "datetime")
    zone = parse.zone(_text(m["timezone"])) if m.get("timezone") is not None else None
    nanos = _time_part(
        m, base_time.nanos if isinstance(base_time, LocalTime | Time | LocalDateTime | DateTime) else None
    )
    if kind in ("localtime", "time"):
        if kind == "localtime":
            return LocalTime(nanos)
        if isinstance(base_time, Time | DateTime):
            return convert("time", Time(nanos, base_time.offset), zone)
        return _time_in(Time(nanos, 0), zone or DEFAULT_ZONE, same_instant=False)
    day = _date_part(m, base_date.date if isinstance(base_date, Date | LocalDateTime | DateTime) else None)
    if kind == "date":
        return Date(day)
    if kind == "localdatetime":
        return LocalDateTime(day, nanos)
    base_zone = _zone_of(base_time)  # a zone comes with a time (or a datetime), never a date
    if base_zone is not None:
        made = zoned(day, nanos, base_zone)
        return made if zone is None else from_epoch(made.epoch_nanos, zone)
    return zoned(day, nanos, zone or DEFAULT_ZONE)


def _zone_of(v: Any) -> tzinfo | None:
    if isinstance(v, DateTime):
        return v.zone
    if isinstance(v, Time):
        return fixed_zone(v.offset)
    return None


def _base(m: dict[str, Any], key: str) -> Temporal | None:
    v = m.get(key)
    if v is not None and not isinstance(v, Temporal):
        raise TemporalError(f"the field {key!r} takes a temporal value, not {type(v).__name__}")
    return v


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise TemporalError(f"a time zone is text, not {type(v).__name__}")
    return v


def _int(m: dict[str, Any], key: str, default: int | None = None) -> int:
    v = m.get(key, default)
    if v is None:
        raise TemporalError(f"the field {key!r} is needed here")
    if not isinstance(v, int) or isinstance(v, bool):
        raise TemporalError(f"the field {key!r} takes a whole number, not {v!r}")
    return v


def _date_part(m: dict[str, Any], base: date | None) -> date:
    """The date of the fields, with `base` giving those left out."""
    year = m.get("year")
    try:
        if "week" in m or "dayofweek" in m:
            iso = base.isocalendar() if base else None
            week_year = _int(m, "year", iso[0] if iso else None)
            return date.fromisocalendar(
                week_year, _int(m, "week", iso[1] if iso else 1), _int(m, "dayofweek", iso[2] if iso else 1)
            )
        year = _int(m, "year", base.year if base else None)
        if "ordinalday" in m:
            return date.fromordinal(date(year, 1, 1).toordinal() + _int(m, "ordinalday") - 1)
        if "quarter" in m or "dayofquarter" in m:
            quarter = _int(m, "quarter", (base.month - 1) // 3 + 1 if base else 1)
            first = date(year, 3 * (quarter - 1) + 1, 1) if 1 <= quarter <= 4 else date(year, 13, 1)
            return date.fromordinal(
                first.toordinal() + _int(m, "dayofquarter", day_of_quarter(base) if base else 1) - 1
            )
        return date(
            year, _int(m, "month", base.month if base else 1), _int(m, "day", base.day if base else 1)
        )
    except (ValueError, OverflowError) as exc:
        raise TemporalError(f"cannot make a date of {_shown(m)}: {exc}") from None


def _time_part(m: dict[str, Any], base: int | None) -> int:
    """Nanoseconds of the day of the fields, with `base` giving those left out."""
    seconds, fraction = divmod(base, NANOS_PER_SECOND) if base is not None else (0, 0)
    hour = _int(m, "hour", seconds // 3600)
    minute = _int(m, "minute", seconds // 60 % 60)
    second = _int(m, "second", seconds % 60)
    if any(k in m for k in ("millisecond", "microsecond", "nanosecond")):
        fraction = (
            _int(m, "millisecond", 0) * 1_000_000
            + _int(m, "microsecond", 0) * 1000
            + _int(m, "nanosecond", 0)
        )
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60 and 0 <= fraction < NANOS_PER_SECOND):
        raise TemporalError(f"cannot make a time of {_shown(m)}: a field is out of range")
    return (hour * 3600 + minute * 60 + second) * NANOS_PER_SECOND + fraction


def _from_epoch_map(m: dict[str, Any]) -> DateTime:
    if "epochseconds" in m:
        nanos = _int(m, "epochseconds") * NANOS_PER_SECOND
    else:
        nanos = _int(m, "epochmillis") * 1_000_000
    nanos += (
        _int(m, "millisecond", 0) * 1_000_000 + _int(m, "microsecond", 0) * 1000 + _int(m, "nanosecond", 0)
    )
    zone = parse.zone(_text(m["timezone"])) if m.get("timezone") is not None else DEFAULT_ZONE
    return from_epoch(nanos, zone)


def _shown(m: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in m.items() if not isinstance(v, Temporal)) + "}"


def statement_now() -> DateTime:
    """The time now, as a statement's clock reads it (once per statement)."""
    when = datetime.now(DEFAULT_ZONE)
    return DateTime(
        when.date(),
        (when.hour * 3600 + when.minute * 60 + when.second) * NANOS_PER_SECOND + when.microsecond * 1000,
        DEFAULT_ZONE,
        0,
    )
