"""The judge check's tasks: the built-in set, and the near miss of a reference answer.

The built-in set is small on purpose (a check is asked before every new judge): 16
questions whose answers a program computed here (arithmetic in words, unit chains,
calendar days, a choice), each with a near miss a careless step gives. A task file
given instead may hold any tasks; those with a reference answer feed the reference and
self-preference measures, and every task the length measure."""

from __future__ import annotations

import datetime as dt
import random

from dagmca.evaluation.tasks import Task
from dagmca.scoring import parse_number

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _arithmetic(rng: random.Random, i: int) -> tuple[Task, str]:
    boxes, per, eaten = rng.randint(3, 9), rng.randint(12, 48), rng.randint(5, 30)
    shared = rng.choice((2, 3, 4))
    total = boxes * per - eaten
    while total % shared:
        eaten += 1
        total = boxes * per - eaten
    q = (
        f"A baker fills {boxes} boxes with {per} rolls each, then {eaten} rolls are sold. The rest are "
        f"shared equally among {shared} shelves. How many rolls go on each shelf?"
    )
    answer = total // shared
    return Task(id=f"check-arith-{i}", question=q, answer=str(answer)), str(
        answer + rng.choice((-2, -1, 1, 10))
    )


def _units(rng: random.Random, i: int) -> tuple[Task, str]:
    hours, minutes = rng.randint(2, 9), rng.choice((15, 20, 30, 45))
    q = f"A train ride lasts {hours} hours and {minutes} minutes. How many seconds is that?"
    seconds = (hours * 60 + minutes) * 60
    return Task(id=f"check-units-{i}", question=q, answer=str(seconds)), str((hours * 100 + minutes) * 60)


def _calendar(rng: random.Random, i: int) -> tuple[Task, str]:
    start = dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 1500))
    later = rng.randint(10, 200)
    q = f"{start.isoformat()} was a {WEEKDAYS[start.weekday()]}. Which day of the week is {later} days later?"
    day = (start.weekday() + later) % 7
    return Task(id=f"check-date-{i}", question=q, answer=WEEKDAYS[day]), WEEKDAYS[(day + 1) % 7]


def _choice(rng: random.Random, i: int) -> tuple[Task, str]:
    primes = [p for p in range(30, 200) if all(p % d for d in range(2, int(p**0.5) + 1))]
    right = rng.choice(primes)
    odd = [n for n in range(31, 200, 2) if n not in primes and n % 5]
    options = [*rng.sample(odd, 3), right]
    rng.shuffle(options)
    letter = "ABCD"[options.index(right)]
    q = "Which of these numbers is prime?"
    near = "ABCD"[(options.index(right) + 1) % 4]
    return Task(id=f"check-prime-{i}", question=q, choices=[str(o) for o in options], answer=letter), near


def built_in(seed: int = 0) -> tuple[list[Task], dict[str, str]]:
    """The built-in tasks and each one's near miss, the same for a seed."""
    rng = random.Random(seed)
    made = [make(rng, i) for i in range(4) for make in (_arithmetic, _units, _calendar, _choice)]
    return [t for t, _ in made], {t.id: near for t, near in made}


def near_miss(task: Task, rng: random.Random) -> str | None:
    """A wrong answer one slip away from a reference a program can move: a number
    nudged (off by one, two or ten), another choice. None for a text answer: the
    writer is asked for one."""
    if task.answer is None:
        return None
    if task.choices:
        letter = str(task.answer).strip().upper()[:1]
        index = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".find(letter)
        if 0 <= index < len(task.choices):
            return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[(index + 1) % len(task.choices)]
        return None
    value = parse_number(str(task.answer))
    if value is None or str(task.answer).strip() != str(task.answer).strip().split()[0]:
        return None
    if value == int(value):
        return str(int(value) + rng.choice((-2, -1, 1, 2, 10)))
    return f"{value * rng.choice((0.9, 1.1)):.6g}"
