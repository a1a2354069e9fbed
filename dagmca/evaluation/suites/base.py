"""What every generated suite is made of: a task with the structured facts it was made
from (`Made`), so that the suite's own checker can work its answer out again by another
route, and the generator's signature: task `index` of a suite from its seed alone, so
that the first 40 tasks of a longer suite are the shipped 40."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dagmca.evaluation.tasks import Task


@dataclass(frozen=True)
class Made:
    """A generated task and the facts it was made from (its checker's input)."""

    task: Task
    spec: dict[str, Any] = field(default_factory=dict)


Make = Callable[[random.Random, int, int], Made]  # (rng, index, difficulty) -> a task
Check = Callable[[Made], bool]  # the answer worked out again, and the task's own checks


@dataclass(frozen=True)
class Generator:
    name: str
    about: str
    make: Make
    check: Check


def rng_for(name: str, seed: int, index: int) -> random.Random:
    """Task `index`'s own random stream: the same whatever the suite's length."""
    return random.Random(f"{name}|{seed}|{index}")


NAMES = (
    "Ada", "Bela", "Caro", "Dov", "Ewa", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lior", "Mara",
    "Nils", "Oona", "Pavel", "Quin", "Rhea", "Sami", "Tove", "Uri", "Vera", "Wim", "Yara", "Zeno",
)  # fmt: skip
