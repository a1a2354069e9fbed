"""What an evaluation would spend, before it spends anything: every (arm, task) session
projected as `dagmca estimate` projects a run, times the repeats. A matched vote arm
is projected at the size its target's largest projection would give it; the judge's
calls (two per pair of arms, task, repeat and trial) are counted, not priced."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from pydantic import Field

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import Arm, vote_for
from dagmca.evaluation.judging import ORDERS
from dagmca.evaluation.power import PowerRow
from dagmca.evaluation.tasks import Task
from dagmca.graph.schema import Strict

if TYPE_CHECKING:
    from dagmca.debate.estimate import Projection


class ArmProjection(Strict):
    arm: str
    sessions: int
    calls_min: int
    calls_max: int
    cost_usd_min: float
    cost_usd_max: float


class EvalProjection(Strict):
    arms: list[ArmProjection]
    judge_calls: int
    calls_min: int
    calls_max: int
    cost_usd_min: float
    cost_usd_max: float
    # the smallest effect each kind of comparison can find at the planned size (dry runs)
    power: list[PowerRow] = Field(default_factory=list)


def _project(cfg: SessionConfig, task: Task) -> Projection:
    from dagmca.debate.estimate import project, role_pricing  # the pipeline, only when asked
    from dagmca.llm.factory import model_name
    from dagmca.llm.prices import resolve_prices

    model = model_name(cfg)
    return project(cfg, task.passage or "", resolve_prices(cfg, model), model, role_pricing(cfg), asked=True)


def project_eval(
    tasks: list[Task],
    arms: list[Arm],
    base: SessionConfig,
    *,
    repeats: int = 1,
    judge_trials: int = 1,
    judge_all: bool = False,
) -> EvalProjection:
    values = base.model_dump()
    rows: list[ArmProjection] = []
    largest: dict[tuple[str, str], int] = {}  # (arm, task) -> its projection's most calls
    for arm in sorted(arms, key=lambda a: a.kind.matched_to is not None):
        lo = hi = 0
        cost_lo = cost_hi = 0.0
        for task in tasks if not arm.kind.derived else []:  # first-vote reads its source: no call
            matched = arm.kind.matched_to is not None and not arm.kind.sampled
            extra = vote_for(largest[(str(arm.kind.matched_to), task.id)]) if matched else {}
            cfg = SessionConfig.model_validate({**arm.settings(values, base.seed), **extra})
            p = _project(cfg, task)
            # a self-consistency vote: as many single samples as its target's calls make
            target = largest.get((str(arm.kind.matched_to), task.id), 0)
            n = max(1, round(target / max(1, int(p.calls.max)))) if arm.kind.sampled else 1
            # a matched vote is sized from its target's own calls, not the ledger's tracing of them
            traced = sum(int(k.max) for name, k in p.by_kind.items() if name.startswith("ledger"))
            largest[(arm.name, task.id)] = int(p.calls.max) - traced
            lo, hi = lo + n * int(p.calls.min), hi + n * int(p.calls.max)
            cost_lo, cost_hi = cost_lo + n * p.cost_usd.min, cost_hi + n * p.cost_usd.max
        rows.append(
            ArmProjection(
                arm=arm.name,
                sessions=len(tasks) * repeats,
                calls_min=lo * repeats,
                calls_max=hi * repeats,
                cost_usd_min=cost_lo * repeats,
                cost_usd_max=cost_hi * repeats,
            )
        )
    judged = sum(1 for t in tasks if t.judged or judge_all)
    compared = [a for a in arms if not a.kind.derived]  # first-vote has no final to judge
    judge_calls = judged * repeats * judge_trials * len(ORDERS) * len(list(combinations(compared, 2)))
    order = [a.name for a in arms]
    rows.sort(key=lambda r: order.index(r.arm))
    return EvalProjection(
        arms=rows,
        judge_calls=judge_calls,
        calls_min=sum(r.calls_min for r in rows) + judge_calls,
        calls_max=sum(r.calls_max for r in rows) + judge_calls,
        cost_usd_min=sum(r.cost_usd_min for r in rows),
        cost_usd_max=sum(r.cost_usd_max for r in rows),
    )
