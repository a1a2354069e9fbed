"""The suites by name, and a suite's tasks: generated, parsed from `--suite NAME[:N]`,
listed, and written as the shipped files hold them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from dagmca.errors import UserError
from dagmca.evaluation.identity import TaskSet, tasks_digest
from dagmca.evaluation.suites.base import Generator, Made, rng_for
from dagmca.evaluation.suites.dates import GENERATOR as DATES
from dagmca.evaluation.suites.logic import GENERATOR as LOGIC_GRID
from dagmca.evaluation.suites.reading import GENERATOR as READING
from dagmca.evaluation.suites.units import GENERATOR as UNIT_CHAINS
from dagmca.evaluation.suites.word_problems import GENERATOR as WORD_PROBLEMS
from dagmca.evaluation.tasks import Task

# a generator's output changes only with this number (a rerun of an eval on a suite of
# another version is another eval)
GENERATOR_VERSION = 1
SIZE, SEED, DIFFICULTY = 40, 0, 2
MAX_SIZE = 5000
SUITES: dict[str, Generator] = {g.name: g for g in (WORD_PROBLEMS, LOGIC_GRID, DATES, UNIT_CHAINS, READING)}


def generate(name: str, n: int = SIZE, seed: int = SEED, difficulty: int = DIFFICULTY) -> list[Made]:
    """The first `n` tasks of suite `name` at `seed` and `difficulty`."""
    gen = SUITES[name]
    return [gen.make(rng_for(name, seed, i), i, difficulty) for i in range(n)]


def parse(spec: str) -> tuple[str, int]:
    """`NAME` or `NAME:N` as --suite takes it; an unknown name or size is one line."""
    name, _, size = spec.strip().partition(":")
    if name not in SUITES:
        raise UserError(
            f"--suite: no suite {name!r}", f"use one of: {', '.join(SUITES)} (dagmca eval --list-suites)"
        )
    try:
        n = int(size) if size else SIZE
    except ValueError:
        raise UserError(
            f"--suite {spec}: {size!r} is not a number of tasks", f"e.g. --suite {name}:80"
        ) from None
    if not 1 <= n <= MAX_SIZE:
        raise UserError(f"--suite {spec}: {n} tasks", f"give 1 to {MAX_SIZE}")
    return name, n


def load_suite(spec: str) -> tuple[list[Task], TaskSet]:
    """The tasks of `--suite NAME[:N]` (seed 0, difficulty 2: the shipped file's, for 40)
    and their identity."""
    name, n = parse(spec)
    tasks = [m.task for m in generate(name, n)]
    found = TaskSet(
        source="suite", name=name, tasks=n, sha256=tasks_digest(tasks), seed=SEED, difficulty=DIFFICULTY,
        generator_version=GENERATOR_VERSION,
    )  # fmt: skip
    return tasks, found


def listing() -> list[tuple[str, int, str]]:
    """Each suite: its name, its shipped size and what it tests."""
    return [(name, SIZE, g.about) for name, g in SUITES.items()]


def jsonl(tasks: Sequence[Task]) -> str:
    """Tasks as the shipped files hold them: one JSON object a line, fields in the task's
    order, nothing unset."""
    return "".join(
        json.dumps(t.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n" for t in tasks
    )
