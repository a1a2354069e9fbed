"""Temporal values on the embedded store's Cypher, as Neo4j has them: made from text
(the ISO 8601 forms Neo4j reads), from maps and from other values; their components,
text, order, arithmetic, truncation and the durations between them; and the stored
timestamps read as zoned datetimes. The expected values are Neo4j's."""

from __future__ import annotations

from typing import Any

import pytest

from dagmca.graph import NodeKind, NodeRecord
from dagmca.store.embedded import CypherSyntaxError, Graph, run


def one(query: str, graph: Graph | None = None) -> Any:
    """The single value of a query's single row."""
    _, rows = run(graph or Graph([], []), f"RETURN {query} AS v", {})
    return rows[0]["v"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("date('2015-07-21')", "2015-07-21"),
        ("date('20150721')", "2015-07-21"),
        ("date('2015-W30-2')", "2015-07-21"),
        ("date('2015-202')", "2015-07-21"),
        ("date('201507')", "2015-07-01"),
        ("localtime('214032.142')", "21:40:32.142"),
        ("localtime('21')", "21:00"),
        ("time('2140-02')", "21:40-02:00"),
        ("time('2140-00:00')", "21:40Z"),
        ("toString(localdatetime('2015-W30T2140'))", "2015-07-20T21:40"),
        ("toString(datetime('2015-202T21+18:00'))", "2015-07-21T21:00+18:00"),
        (
            "toString(datetime('2015-07-21T21:40:32.142[Europe/London]'))",
            "2015-07-21T21:40:32.142+01:00[Europe/London]",
        ),
        ("duration('P5M1.5D')", "P5M1DT12H"),
        ("duration('P0.75M')", "P22DT19H51M49.5S"),
        ("duration('P2012-02-02T14:37:21.545')", "P2012Y2M2DT14H37M21.545S"),
        ("duration('PT-1M-0.001S')", "PT-1M-0.001S"),
    ],
)
def test_text_is_read_as_neo4j_reads_it(text: str, shown: str) -> None:
    assert one(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("date({year: 1817, week: 1})", "1816-12-30"),
        ("date({year: 1984, quarter: 3, dayOfQuarter: 45})", "1984-08-14"),
        ("date({date: date('1984-11-11'), week: 1})", "1984-01-08"),
        ("localtime({hour: 12, minute: 31, second: 14, millisecond: 123, microsecond: 456, nanosecond: 789})",
         "12:31:14.123456789"),
        ("toString(datetime({year: 1984, month: 10, day: 11, hour: 12, timezone: 'Europe/Stockholm'}))",
         "1984-10-11T12:00+01:00[Europe/Stockholm]"),
        ("toString(datetime({year: 1984, ordinalDay: 202, timezone: 'Europe/Stockholm'}))",
         "1984-07-20T00:00+02:00[Europe/Stockholm]"),
        ("time({time: time('12:31:14+01:00'), timezone: '+05:00'})", "16:31:14+05:00"),
        ("toString(datetime.fromepoch(416779, 999999999))", "1970-01-05T19:46:19.999999999Z"),
        ("duration({months: 0.75})", "P22DT19H51M49.5S"),
        ("duration({minutes: 1.5, seconds: 1})", "PT1M31S"),
    ],
)  # fmt: skip
def test_maps_and_other_values_make_temporal_values(text: str, shown: str) -> None:
    assert one(text) == shown


def test_components() -> None:
    _, rows = run(
        Graph([], []),
        "WITH datetime({year: 1984, month: 11, day: 11, hour: 12, minute: 31, second: 14, "
        "nanosecond: 645876123, timezone: 'Europe/Stockholm'}) AS d, "
        "duration({years: 1, months: 4, days: 10, hours: 1, minutes: 1}) AS u "
        "RETURN d.week AS week, d.weekYear AS wy, d.ordinalDay AS od, d.dayOfQuarter AS dq, "
        "d.microsecond AS us, d.timezone AS tz, d.offsetMinutes AS om, d.epochSeconds AS es, "
        "u.quarters AS q, u.minutesOfHour AS mh, date('1984-01-01').weekYear AS last",
        {},
    )
    assert rows == [
        {"week": 45, "wy": 1984, "od": 316, "dq": 42, "us": 645876, "tz": "Europe/Stockholm", "om": 60,
         "es": 469020674, "q": 5, "mh": 1, "last": 1983}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # a date takes the whole days of the seconds; a month keeps the day or the month's last
        ("date('1984-10-11') + duration({years: 12.5, months: 5.5, days: 14.5, hours: 16.5})", "1997-10-11"),
        ("date('2024-01-31') + duration('P1M')", "2024-02-29"),
        ("localtime('12:31:14.000000001') - duration({hours: 16, minutes: 13, seconds: 10})",
         "20:18:04.000000001"),
        ("toString(localdatetime('1984-10-11T12:31:14') + duration('P1M-14DT15H49M10S'))",
         "1984-10-29T04:20:24"),
        ("duration('P12Y5M14DT16H13M10.000000001S') * 0.5", "P6Y2M22DT13H21M8S"),
        ("duration('PT1H') + duration('PT30M')", "PT1H30M"),
        # a day across a change of clocks is still a calendar day; hours are on the instant
        ("toString(datetime('2017-10-28T12:00[Europe/Stockholm]') + duration('P1D'))",
         "2017-10-29T12:00+01:00[Europe/Stockholm]"),
        ("toString(datetime('2017-10-28T12:00[Europe/Stockholm]') + duration('PT24H'))",
         "2017-10-29T11:00+01:00[Europe/Stockholm]"),
    ],
)  # fmt: skip
def test_arithmetic(text: str, shown: str) -> None:
    assert one(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("duration.between(date('1984-10-11'), date('2015-06-24'))", "P30Y8M13D"),
        ("duration.between(localdatetime('2018-01-02T10:00:00.1'), localdatetime('2018-01-01T10:00:00.2'))",
         "PT-23H-59M-59.9S"),
        ("duration.between(datetime('2014-07-21T21:40:36.143+0200'), date('2015-06-24'))",
         "P11M2DT2H19M23.857S"),
        ("duration.between(time('14:30'), time('16:30+0100'))", "PT1H"),
        ("duration.inMonths(date('2018-03-11'), date('2016-06-24'))", "P-1Y-8M"),
        ("duration.inDays(localdatetime('2015-07-21T21:40:32.142'), date('2015-06-24'))", "P-27D"),
        ("duration.inSeconds(datetime({year: 2017, month: 10, day: 29, timezone: 'Europe/Stockholm'}), "
         "localdatetime({year: 2017, month: 10, day: 29, hour: 4}))", "PT5H"),
        ("duration.between(null, date())", None),
    ],
)  # fmt: skip
def test_durations_between(text: str, shown: str | None) -> None:
    assert one(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("date.truncate('weekYear', date('1984-02-01'), {day: 5})", "1984-01-05"),
        ("date.truncate('week', date('1984-10-11'), {dayOfWeek: 2})", "1984-10-09"),
        ("toString(datetime.truncate('hour', datetime('1984-10-11T12:31:14.645876123-01:00'), "
         "{timezone: 'Europe/Stockholm'}))", "1984-10-11T12:00+01:00[Europe/Stockholm]"),
        ("localtime.truncate('microsecond', localtime('12:31:14.645876123'), {nanosecond: 2})",
         "12:31:14.645876002"),
    ],
)  # fmt: skip
def test_truncation(text: str, shown: str) -> None:
    assert one(text) == shown


def test_order_and_equality() -> None:
    _, rows = run(
        Graph([], []),
        "RETURN date('2015-07-21') < date('2016-01-01') AS lt, "
        "time('10:00+01:00') < time('09:35Z') AS by_instant, "
        "duration('PT1H') < duration('PT2H') AS no_order, duration('PT60M') = duration('PT1H') AS same, "
        "date('2015-07-21') = localdatetime('2015-07-21T00:00') AS kinds",
        {},
    )
    assert rows == [{"lt": True, "by_instant": True, "no_order": None, "same": True, "kinds": False}]
    # ORDER BY sorts temporal values by type first: zoned datetimes, …, dates, …, durations
    _, by_value = run(
        Graph([], []),
        "UNWIND [date('2015-01-01'), duration('PT1S'), datetime('2015-01-01T00:00Z'), "
        "localtime('12:00')] AS v WITH v ORDER BY v RETURN collect(toString(v)) AS vs",
        {},
    )
    assert by_value == [{"vs": ["2015-01-01T00:00Z", "2015-01-01", "12:00", "PT1S"]}]


def test_one_statement_reads_one_clock() -> None:
    assert one("datetime() = datetime() AND duration.inSeconds(localtime(), localtime()) = duration('PT0S')")


def test_stored_timestamps_are_zoned_datetimes() -> None:
    node = NodeRecord(
        id="s/x", kind=NodeKind.SESSION, session="s", created_at="2026-01-05T10:20:30.123+00:00",
        props={"started_at": "2026-01-05T10:20:30.123+00:00", "finished_at": "2026-01-05T10:25:00.000+00:00",
               "title": "2026-01-05T10:20:30.123+00:00 is text here"},
    )  # fmt: skip
    graph = Graph([node], [])
    _, rows = run(
        graph,
        "MATCH (s:Session) RETURN s.created_at IS :: ZONED DATETIME AS zoned, s.title IS :: STRING AS text, "
        "duration.between(s.started_at, s.finished_at) AS took, date(s.started_at) AS day, "
        "s.started_at.hour AS hour, s.created_at AS printed",
        {},
    )
    assert rows == [
        {"zoned": True, "text": True, "took": "PT4M29.877S", "day": "2026-01-05", "hour": 10,
         "printed": "2026-01-05T10:20:30.123+00:00"}
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["date('2015-13-01')", "date({year: 2015, month: 2, day: 30})",
     "datetime('2015-07-21T10:00[Nowhere/City]')", "duration('P1X')",
     "date('2015-07-21') + date('2015-07-21')", "date({year: 2015, hour: 3})"],
)  # fmt: skip
def test_a_value_that_cannot_be_made_is_one_line(text: str) -> None:
    with pytest.raises(CypherSyntaxError) as caught:
        one(text)
    assert "\n" not in caught.value.line()
