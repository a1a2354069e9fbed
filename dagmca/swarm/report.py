"""Routers compared, as `eval` compares arms: final accuracy with a Wilson interval,
final S with a bootstrap interval over repeats beside its noise floor, and every pair
of routers tested on accuracy (exact McNemar over the stream's tasks, paired by repeat
and position) and on S (sign test over repeats), Holm-corrected together."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from pydantic import Field

from dagmca.evaluation.stats import holm, sign_test, wilson
from dagmca.graph.schema import Strict
from dagmca.graph.store_nodes import TrackRecord
from dagmca.swarm.graph import Records
from dagmca.swarm.loop import StreamRun


class RouterRow(Strict):
    router: str
    repeats: int
    tasks: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    s: float | None
    s_ci: tuple[float, float] | None
    s_noise: float | None
    d: float | None
    f_p: float | None
    tokens: int
    # summed over repeats
    record: Records = Field(default_factory=dict)


class Comparison(Strict):
    a: str
    b: str
    measure: str  # accuracy or s
    wins: int  # a better than b
    losses: int
    p: float
    p_holm: float = 1.0


class Curve(Strict):
    router: str
    seen: list[int]
    accuracy: list[list[float]]  # per repeat
    s: list[list[float | None]]
    d: list[list[float | None]]


class SwarmReport(Strict):
    swarm_id: str
    tasks: int
    agents: list[str]
    types: list[str]
    routers: list[RouterRow]
    comparisons: list[Comparison]
    curves: list[Curve]
    attempted_now: int  # attempts made by this run (0: everything was read back)
    unmade: int = 0  # attempts not made: the budget was spent (a rerun with a raised one makes them)


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _bootstrap_mean(
    values: Sequence[float], seed: int = 0, resamples: int = 2000
) -> tuple[float, float] | None:
    if not values:
        return None
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(values) for _ in values) / len(values) for _ in range(resamples))
    return round(means[int(0.025 * resamples)], 4), round(
        means[min(resamples - 1, int(0.975 * resamples))], 4
    )


def row(router: str, runs: Sequence[StreamRun]) -> RouterRow:
    attempts = [a for r in runs for a in r.attempts]
    right = sum(a.success for a in attempts)
    lo, hi = wilson(right, len(attempts))
    finals = [r.snapshots[-1] for r in runs if r.snapshots]
    s_values = [s.s for s in finals if s.s is not None]
    record: Records = {}
    for a in attempts:
        cell = record.setdefault(a.agent, {}).setdefault(a.task_type, TrackRecord())
        cell.trials += 1
        cell.successes += int(a.success)
    return RouterRow(
        router=router,
        repeats=len(runs),
        tasks=len(attempts) // max(1, len(runs)),
        accuracy=round(right / len(attempts), 4) if attempts else 0.0,
        accuracy_ci=(round(lo, 4), round(hi, 4)),
        s=_mean(s_values),
        s_ci=_bootstrap_mean(s_values),
        s_noise=_mean([s.s_noise for s in finals if s.s_noise is not None]),
        d=_mean([s.d for s in finals if s.d is not None]),
        f_p=_mean([s.f_p for s in finals if s.f_p is not None]),
        tokens=sum(a.tokens for a in attempts),
        record=record,
    )


def compare(by_router: dict[str, list[StreamRun]]) -> list[Comparison]:
    out: list[Comparison] = []
    for a, b in itertools.combinations(by_router, 2):
        wins = losses = 0
        for ra, rb in zip(by_router[a], by_router[b], strict=False):
            for x, y in zip(ra.attempts, rb.attempts, strict=False):
                wins += x.success and not y.success
                losses += y.success and not x.success
        out.append(
            Comparison(a=a, b=b, measure="accuracy", wins=wins, losses=losses, p=sign_test(wins, losses))
        )
        s_wins = s_losses = 0
        for ra, rb in zip(by_router[a], by_router[b], strict=False):
            sa = ra.snapshots[-1].s if ra.snapshots else None
            sb = rb.snapshots[-1].s if rb.snapshots else None
            if sa is not None and sb is not None and sa != sb:
                s_wins += sa > sb
                s_losses += sb > sa
        out.append(
            Comparison(a=a, b=b, measure="s", wins=s_wins, losses=s_losses, p=sign_test(s_wins, s_losses))
        )
    for c, adjusted in zip(out, holm([c.p for c in out]), strict=True):
        c.p_holm = round(adjusted, 6)
    return out


def curves(by_router: dict[str, list[StreamRun]]) -> list[Curve]:
    out = []
    for router, runs in by_router.items():
        seen = [s.seen for s in runs[0].snapshots] if runs else []
        out.append(
            Curve(
                router=router,
                seen=seen,
                accuracy=[[s.accuracy for s in r.snapshots] for r in runs],
                s=[[s.s for s in r.snapshots] for r in runs],
                d=[[s.d for s in r.snapshots] for r in runs],
            )
        )
    return out


def build_report(
    swarm_id: str, agents: list[str], types: list[str], by_router: dict[str, list[StreamRun]]
) -> SwarmReport:
    tasks = max((len(r.attempts) for runs in by_router.values() for r in runs), default=0)
    made = sum(len(r.attempts) - r.replayed for runs in by_router.values() for r in runs)
    return SwarmReport(
        swarm_id=swarm_id,
        tasks=tasks,
        agents=agents,
        types=types,
        routers=[row(k, v) for k, v in by_router.items()],
        comparisons=compare(by_router),
        curves=curves(by_router),
        attempted_now=made,
        unmade=sum(r.unmade for runs in by_router.values() for r in runs),
    )
