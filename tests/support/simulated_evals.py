"""Evals simulated as records (no session run), built as an eval of scripted arms would
build them, so that hundreds of evals take seconds: the tests of the statistics and
`scripts/eval_simulations.py`, whose figures the benchmarks page cites, share them."""

from __future__ import annotations

import math
import random

from dagmca.evaluation.records import RunRecord, Verdict
from dagmca.evaluation.scoring import Score

LONGER = 1.3  # the wordier arm's answers, on average, over the other's
LENGTH_SCALE = 80.0  # words: a length difference of this much moves a biased judge a lot


def length_biased(
    rng: random.Random, tasks: int, strength: float | None
) -> tuple[list[RunRecord], list[Verdict]]:
    """Two arms of equal quality on open tasks, b's answers 1.3x a's on average (each
    length log-normal, so b's is shorter on some tasks); the judge prefers the longer
    answer: always, with `strength` None, else with the chance
    1 / (1 + exp(-strength * tanh(delta / 80))), delta b's words less a's (0: a coin)."""
    runs: list[RunRecord] = []
    verdicts: list[Verdict] = []
    for t in range(tasks):
        a, b = rng.lognormvariate(5.3, 0.3), LONGER * rng.lognormvariate(5.3, 0.3)
        for arm, n in (("a", a), ("b", b)):
            runs.append(
                RunRecord(
                    arm=arm, protocol="mca", task=f"t{t}", repeat=0, session=f"{arm}{t}", status="done",
                    answer="x", score=Score(None), calls=3, tokens=30, cost_usd=0.0, words=round(n),
                )
            )  # fmt: skip
        if strength is None:
            longer = b > a
        else:
            longer = rng.random() < 1 / (1 + math.exp(-strength * math.tanh((b - a) / LENGTH_SCALE)))
        verdicts.append(Verdict("a", "b", f"t{t}", 0, "loss" if longer else "win"))
    return runs, verdicts
