"""Multi-step arithmetic word problems: a starting stock, then a chain of steps that
add boxes of items, take some away, double or share them out evenly; the difficulty is
the number of steps. The checker replays the steps on the stored operations."""

from __future__ import annotations

import random

from dagmca.evaluation.suites.base import NAMES, Generator, Made
from dagmca.evaluation.tasks import Task

PLACES = (("bakery", "rolls"), ("library", "books"), ("farm stand", "melons"), ("workshop", "bolts"),
          ("school", "pencils"), ("garden centre", "bulbs"), ("depot", "crates"))  # fmt: skip


def _step(rng: random.Random, have: int, items: str) -> tuple[str, list[int], int]:
    kind = rng.choice(("boxes", "away", "double", "share"))
    if kind == "boxes":
        boxes, each = rng.randint(2, 9), rng.randint(6, 40)
        return f"buys {boxes} boxes of {each} {items} each", [0, boxes, each], have + boxes * each
    if kind == "away" and have > 10:
        gone = rng.randint(1, have // 2)
        return f"sells {gone} of them", [1, gone], have - gone
    if kind == "double" and have < 5000:
        return "doubles what it has", [2], have * 2
    shares = [n for n in (2, 3, 4, 5, 6) if have % n == 0]
    if kind == "share" and shares:
        n = rng.choice(shares)
        return f"splits them evenly into {n} groups and keeps one group", [3, n], have // n
    extra = rng.randint(3, 30)
    return f"receives {extra} more", [4, extra], have + extra


def make(rng: random.Random, index: int, difficulty: int) -> Made:
    place, items = rng.choice(PLACES)
    owner = rng.choice(NAMES)
    have = rng.randint(20, 300)
    start, said, ops = have, [], []
    for _ in range(difficulty + 1):
        text, op, have = _step(rng, have, items)
        said.append(text)
        ops.append(op)
    steps = "; then it ".join(said)
    question = (
        f"{owner}'s {place} starts the week with {start} {items}. During the week it {steps}. "
        f"How many {items} does it have at the end of the week?"
    )
    task = Task(id=f"word-{index:03d}", question=question, answer=str(have), scoring="numeric")
    return Made(task, {"start": start, "ops": ops})


def replay(start: int, ops: list[list[int]]) -> int:
    have = start
    for op in ops:
        code, *args = op
        if code == 0:
            have += args[0] * args[1]
        elif code == 1:
            have -= args[0]
        elif code == 2:
            have *= 2
        elif code == 3:
            if have % args[0]:
                raise ValueError("an uneven share")
            have //= args[0]
        else:
            have += args[0]
    return have


def check(made: Made) -> bool:
    spec = made.spec
    return (
        replay(spec["start"], spec["ops"]) == int(str(made.task.answer))
        and str(spec["start"]) in made.task.question
    )


GENERATOR = Generator(
    "word-problems", "multi-step arithmetic word problems (difficulty: the steps)", make, check
)
