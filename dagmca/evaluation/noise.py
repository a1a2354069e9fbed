"""The noise floor: an arm against itself over every pair of its repeats, through the
same test as every comparison. Nothing differs but chance, so its p-value is the
eval's own false-positive check. It is run for every arm whose samples vary (its
debaters answer above temperature 0, or it is a sampled vote); an arm that gives the
same answer every time has no floor to find, and is run only when no arm varies, so
that asking for a floor always gives one. The floors' p-values are Holm-corrected
together, as a reader scans them all."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from typing import Literal

from dagmca.evaluation.breakdown import PairedComparison
from dagmca.evaluation.paired import Slot, accuracy_slots, tested, verdict_slots
from dagmca.evaluation.records import RunRecord, Verdict
from dagmca.evaluation.stats import holm


class NoiseFloor(PairedComparison):
    """An arm against itself over every pair of its repeats, through the same test as
    every comparison: there is no difference to find, so its p-value under 0.05 is a
    false positive of the eval's own making. `pairs`: the pairs of repeats; `p_holm`
    over every floor of the eval."""

    kind: Literal["accuracy", "judged"]
    pairs: int


def floor_arms(varying: Sequence[str], names: Sequence[str]) -> list[str]:
    """The arms that get a floor: those whose samples vary, else the first arm."""
    return list(varying) or list(names[:1])


def noise_floors(
    arms: Sequence[str], runs: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int = 0
) -> list[NoiseFloor]:
    """Each of `arms` against itself, Holm-corrected over the floors found."""
    found = [f for f in (noise_floor(a, runs, verdicts, seed) for a in arms) if f is not None]
    adjusted = holm([f.p_value for f in found])
    return [f.model_copy(update={"p_holm": p}) for f, p in zip(found, adjusted, strict=True)]


def noise_floor(
    arm: str, runs: Sequence[RunRecord], verdicts: Sequence[Verdict], seed: int = 0
) -> NoiseFloor | None:
    """`arm` against itself over every pair of its repeats (i < j, repeat j as the
    arm): judged verdicts when there are any (`verdicts` hold them as `arm#j` against
    `arm#i`), else right against wrong. Its `p_holm` is its own p until corrected
    over the eval's floors (`noise_floors`)."""
    prefix = f"{arm}#"
    mine = [v for v in verdicts if v.arm.startswith(prefix) and v.baseline.startswith(prefix)]
    if mine:
        kind: Literal["accuracy", "judged"] = "judged"
        slots = []
        for (a, b), group in _grouped(mine).items():
            slots += [Slot(s.task, f"{b}-{a}|{s.slot}", s.outcome) for s in verdict_slots(group)]
    else:
        kind = "accuracy"
        own = [r for r in runs if r.arm == arm]
        repeats = sorted({r.repeat for r in own})
        slots = []
        for i, j in combinations(repeats, 2):
            later = [replace(r, repeat=0) for r in own if r.repeat == j]
            slots += [
                Slot(s.task, f"{i}-{j}", s.outcome)
                for s in accuracy_slots(later, [replace(r, repeat=0) for r in own if r.repeat == i])
            ]
    if not slots:
        return None
    pairs = len({s.slot.split("|")[0] for s in slots})
    found = tested(slots, seed=seed)
    return NoiseFloor(arm=arm, baseline=arm, kind=kind, pairs=pairs, p_holm=found.p_value, **vars(found))


def _grouped(verdicts: Sequence[Verdict]) -> dict[tuple[str, str], list[Verdict]]:
    by: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by[(v.arm, v.baseline)].append(v)
    return by
