"""Generated task suites: tasks whose answers a program worked out, each suite from a
seed and a difficulty, with a checker that works every answer out again by another
route. `scripts/make_eval_suites.py` writes the shipped files (`examples/eval/`, 40
tasks each at seed 0 and difficulty 2); `dagmca eval --suite NAME[:N]` generates the
same tasks in process (task i depends on the seed and i alone, so the first 40 of a
longer suite are the shipped 40). A suite's identity (name, seed, difficulty, generator
version and the hash of its tasks) is part of every eval's that runs it.

No text is copied from anywhere: names, places, units and sentences are the
generators' own."""

from __future__ import annotations

from dagmca.evaluation.suites.base import Made
from dagmca.evaluation.suites.catalogue import (
    DIFFICULTY,
    GENERATOR_VERSION,
    SEED,
    SIZE,
    SUITES,
    generate,
    jsonl,
    listing,
    load_suite,
    parse,
)

__all__ = [
    "DIFFICULTY", "GENERATOR_VERSION", "SEED", "SIZE", "SUITES", "Made", "generate", "jsonl", "listing",
    "load_suite", "parse",
]  # fmt: skip
