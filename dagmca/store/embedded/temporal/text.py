"""Temporal values read from text, in the forms Neo4j reads: ISO 8601 dates (calendar,
week and ordinal, basic and extended, to the year), times to the nanosecond with an
offset, a named zone after a datetime (`…+01:00[Europe/Stockholm]`), and durations
(designators, the alternative `P2012-02-02T14:37:21.545`, and Neo4j's signed parts such
as `PT-1M-0.001S`, the form it writes negative durations in).

aniso8601 reads the text into its parts (as text, so no precision is lost); the parts
are checked and put together here."""

from __future__ import annotations

import re
from datetime import date, tzinfo
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dagmca.store.embedded.temporal.values import (
    NANOS_PER_SECOND,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    TemporalError,
    Time,
    approximate,
    fixed_zone,
    offset_at,
)

_NAMED_ZONE = re.compile(r"^(?P<body>.*?)\[(?P<zone>[^\]]+)\]$")
_OFFSET = re.compile(r"^(?P<sign>[+-])(?P<h>\d{2})(?::?(?P<m>\d{2}))?(?::?(?P<s>\d{2}))?$")
# Neo4j's `YYYYMM`, which ISO 8601 leaves out (it reads as `YYMMDD`)
_YEAR_MONTH = re.compile(r"^(\d{4})(\d{2})$")
_ZERO_OFFSET = re.compile(r"-00(?::?00)?$")  # `-00:00`, which ISO 8601 forbids and Neo4j reads as Z


def zone(text: str) -> tzinfo:
    """A zone given as text: an offset (`+01:00`, `-0130`, `+02:05:59`, `Z`) or a name."""
    if text in ("Z", "z"):
        return fixed_zone(0)
    found = _OFFSET.match(text)
    if found:
        seconds = int(found["h"]) * 3600 + int(found["m"] or 0) * 60 + int(found["s"] or 0)
        if seconds > 18 * 3600:
            raise TemporalError(f"cannot read the time zone {text!r}: offsets go up to 18 hours")
        return fixed_zone(-seconds if found["sign"] == "-" else seconds)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise TemporalError(f"cannot read the time zone {text!r}: no such zone") from None


def _aniso(kind: str, text: str) -> Any:
    import aniso8601  # imported here: only a query that reads a temporal text needs it
    from aniso8601.builders import TupleBuilder

    parse = {"date": aniso8601.parse_date, "time": aniso8601.parse_time, "datetime": aniso8601.parse_datetime}
    try:
        return parse[kind](text, builder=TupleBuilder)
    except (ValueError, NotImplementedError, aniso8601.exceptions.ISOFormatError) as exc:
        raise TemporalError(f"cannot read {text!r} as a {kind}: {exc}") from None


def _day(parts: Any, text: str) -> date:
    """A date from aniso8601's parts: calendar, week (ISO) or ordinal, to the year."""
    try:
        year = int(parts.YYYY)
        if parts.Www is not None:
            return date.fromisocalendar(year, int(parts.Www), int(parts.D or 1))
        if parts.DDD is not None:
            return date.fromordinal(date(year, 1, 1).toordinal() + int(parts.DDD) - 1)
        return date(year, int(parts.MM or 1), int(parts.DD or 1))
    except (ValueError, OverflowError) as exc:
        raise TemporalError(f"cannot read {text!r} as a date: {exc}") from None


def _nanos(parts: Any, text: str) -> int:
    """Nanoseconds of the day from aniso8601's time parts (`ss` may have a fraction)."""
    hours, minutes = int(parts.hh), int(parts.mm or 0)
    seconds = Fraction(str(parts.ss).replace(",", ".")) if parts.ss else Fraction(0)
    if hours > 23 or minutes > 59 or seconds >= 60:
        raise TemporalError(f"cannot read {text!r} as a time: a field is out of range")
    return int((hours * 3600 + minutes * 60 + seconds) * NANOS_PER_SECOND)


def _offset(parts: Any) -> tzinfo | None:
    tz = parts.tz
    if tz is None:
        return None
    if tz.Z:
        return fixed_zone(0)
    seconds = int(tz.hh) * 3600 + int(tz.mm or 0) * 60
    return fixed_zone(-seconds if tz.negative else seconds)


def _split_zone(text: str) -> tuple[str, str | None]:
    text = text.strip()
    named = _NAMED_ZONE.match(text)
    body, name = (named["body"], named["zone"]) if named else (text, None)
    return _ZERO_OFFSET.sub("Z", body), name


def parse_date(text: str) -> Date:
    text = _YEAR_MONTH.sub(r"\1-\2", text.strip())
    return Date(_day(_aniso("date", text), text))


def parse_local_time(text: str) -> LocalTime:
    body, _ = _split_zone(text)
    return LocalTime(_nanos(_aniso("time", body), text))


def parse_time(text: str, default: tzinfo) -> Time:
    body, _ = _split_zone(text)
    parts = _aniso("time", body)
    nanos = _nanos(parts, text)
    found = _offset(parts) or default
    _, _, offset = offset_at(found, date.today(), nanos)
    return Time(nanos, offset)


def _date_and_time(text: str) -> tuple[date, int, tzinfo | None, str | None]:
    body, name = _split_zone(text)
    day_text, _, time_text = body.partition("T")
    if not time_text:
        return parse_date(day_text).date, 0, None, name
    parts = _aniso("datetime", _YEAR_MONTH.sub(r"\1-\2", day_text) + "T" + time_text)
    return _day(parts.date, text), _nanos(parts.time, text), _offset(parts.time), name


def parse_local_datetime(text: str) -> LocalDateTime:
    day, nanos, _, _ = _date_and_time(text)
    return LocalDateTime(day, nanos)


def parse_datetime(text: str, default: tzinfo) -> DateTime:
    """A datetime; with a named zone (`[Europe/Stockholm]`) the offset follows the zone."""
    day, nanos, offset, name = _date_and_time(text)
    where = zone(name) if name else offset or default
    day, nanos, seconds = offset_at(where, day, nanos)
    return DateTime(day, nanos, where, seconds)


# -- durations -----------------------------------------------------------------------------
# a sign of one part: after P, T or another part's designator (not the alternative
# form's `P2012-02-02`)
_SIGNED_PART = re.compile(r"(?<=[PTYMWDHS])([-+])(?=\d)")
_PART = re.compile(r"(?:(?<=[PTYMWDHS])([-+]))?\d+(?:[.,]\d+)?[YMWDHS]")
_UNITS = {"PnY": 12, "PnM": 1, "PnW": 7, "PnD": 1, "TnH": 3600, "TnM": 60, "TnS": 1}


def parse_duration(text: str) -> Duration:
    """A duration: `P14DT16H12M`, `P5M1.5D`, `P2012-02-02T14:37:21.545`, `PT-1.5S`, `-P1D`."""
    import aniso8601
    from aniso8601.builders import TupleBuilder

    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    # Neo4j's signed parts: each part's sign is read apart, the rest by aniso8601
    signs = [m.group(1) for m in _PART.finditer(body)]
    unsigned = _SIGNED_PART.sub("", body)
    try:
        parts = aniso8601.parse_duration(unsigned.replace(",", "."), builder=TupleBuilder)
    except (ValueError, NotImplementedError, aniso8601.exceptions.ISOFormatError) as exc:
        raise TemporalError(f"cannot read {text!r} as a duration: {exc}") from None
    values = {k: Fraction(getattr(parts, k)) for k in _UNITS if getattr(parts, k) is not None}
    written = [k for k in _UNITS if k in values]
    if len(signs) == len(written):  # the designator form: a sign per part, in order
        values = {k: -v if s == "-" else v for (k, v), s in zip(values.items(), signs, strict=True)}
    months = values.get("PnY", 0) * 12 + values.get("PnM", 0)
    days = values.get("PnW", 0) * 7 + values.get("PnD", 0)
    seconds = values.get("TnH", 0) * 3600 + values.get("TnM", 0) * 60 + values.get("TnS", 0)
    return approximate(sign * months, sign * days, sign * seconds, Fraction(0))
