"""Date and calendar reasoning: the date some days after another, the days between two
dates, the weekday some days on, and (at difficulty 3) the working days between two
dates. Difficulty widens the spans, across month ends and leap days. The checker works
each answer out again from the stored dates, counting day by day."""

from __future__ import annotations

import datetime as dt
import random

from dagmca.evaluation.suites.base import NAMES, Generator, Made
from dagmca.evaluation.tasks import Task

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SPANS = {1: 40, 2: 400, 3: 1200}
EVENTS = ("a festival", "a ferry service", "a survey", "a repair", "an exhibition", "a course", "a harvest")


def _day(d: dt.date) -> str:
    return f"{WEEKDAYS[d.weekday()]} {d.day} {d.strftime('%B')} {d.year}"


def make(rng: random.Random, index: int, difficulty: int) -> Made:
    span = SPANS.get(difficulty, SPANS[2])
    start = dt.date(2019, 1, 1) + dt.timedelta(days=rng.randint(0, 2900))
    days = rng.randint(5, span)
    end = start + dt.timedelta(days=days)
    kinds = ["after", "between", "weekday"] + (["working"] if difficulty >= 3 else [])
    kind = rng.choice(kinds)
    who, what = rng.choice(NAMES), rng.choice(EVENTS)
    if kind == "after":
        q = (
            f"{who} plans {what} that starts on {_day(start)} and lasts {days} days, counting from the day "
            "after it starts. On what date does it end? Give the date as YYYY-MM-DD."
        )
        answer, scoring = end.isoformat(), "exact"
    elif kind == "between":
        q = (
            f"{who} noted {what} on {_day(start)} and again on {_day(end)}. How many days passed from the "
            "first date to the second?"
        )
        answer, scoring = str(days), "numeric"
    elif kind == "weekday":
        q = (
            f"{who} began {what} on {start.isoformat()}, a {WEEKDAYS[start.weekday()]}. Which day of the "
            f"week is {days} days later?"
        )
        answer, scoring = WEEKDAYS[end.weekday()], "exact"
    else:
        q = (
            f"{who} runs {what} from {_day(start)} to {_day(end)}, both days included. How many of those "
            "days are Monday to Friday?"
        )
        answer, scoring = str(_working(start, end)), "numeric"
    task = Task(id=f"date-{index:03d}", question=q, answer=answer, scoring=scoring)
    return Made(task, {"kind": kind, "start": start.isoformat(), "days": days})


def _working(start: dt.date, end: dt.date) -> int:
    return sum(1 for k in range((end - start).days + 1) if (start + dt.timedelta(days=k)).weekday() < 5)


def check(made: Made) -> bool:
    """Counted day by day from the start, not by date arithmetic."""
    spec = made.spec
    day = dt.date.fromisoformat(spec["start"])
    weekday = day.weekday()
    for _ in range(spec["days"]):
        day = day.fromordinal(day.toordinal() + 1)
        weekday = (weekday + 1) % 7
    start = dt.date.fromisoformat(spec["start"])
    said = str(made.task.answer)
    if spec["kind"] == "after":
        return said == day.isoformat()
    if spec["kind"] == "between":
        return int(said) == day.toordinal() - start.toordinal()
    if spec["kind"] == "weekday":
        return said == WEEKDAYS[weekday] and WEEKDAYS[weekday] == WEEKDAYS[day.weekday()]
    return int(said) == _working(start, day)


GENERATOR = Generator(
    "dates", "date and calendar reasoning: spans, days between, weekdays, working days", make, check
)
