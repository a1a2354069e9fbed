"""Running a judge check in a Workspace: the battery over every task at once, its calls
under one gate and one spend against the settings' budgets (as an eval's are), logged
under the check's id and kept in the store's response cache, so that running it again
asks nothing; then the measures, stored as the judge's JudgeCheck node."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from dagmca.config import SessionConfig
from dagmca.evaluation.identity import tasks_digest
from dagmca.evaluation.judgecheck.battery import Asking, Writers, battery
from dagmca.evaluation.judgecheck.graph import check_record, judge_of
from dagmca.evaluation.judgecheck.measures import Judged, measures, overall
from dagmca.evaluation.judgecheck.models import JudgeCheckReport
from dagmca.evaluation.judgecheck.tasks import built_in
from dagmca.evaluation.tasks import Task
from dagmca.graph import ModelRole, utcnow
from dagmca.graph.calls import spent
from dagmca.llm.factory import model_name
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.stack.base import BudgetExhausted
from dagmca.workspace import BaseWorkspace as Workspace
from dagmca.workspace import ClientLike
from dagmca.workspace.session import SharedResources


@dataclass(frozen=True)
class CheckPlan:
    """What to check the judge on: the tasks (the built-in set when none were given,
    with its near misses), and the other model for self-preference (None: not measured)."""

    tasks: list[Task]
    built_in: bool = False
    near: dict[str, str] = field(default_factory=dict)
    other_model: str | None = None


def plan_check(tasks: Sequence[Task] | None, other_model: str | None = None) -> CheckPlan:
    if tasks is None:
        found, near = built_in()
        return CheckPlan(found, built_in=True, near=near, other_model=other_model)
    return CheckPlan(list(tasks), other_model=other_model)


def as_judge(base: SessionConfig, model: str | None = None) -> SessionConfig:
    """`base` with every role played by the judge's model (or by `model` on the judge's
    endpoint): the writer of the judge's own answers, and of the other model's."""
    own = base.roles.get(ModelRole.JUDGE)
    if own is None or not own.is_set():
        return base.model_copy(update={"roles": {}, **({"model": model} if model else {})})
    role = own.model_copy(update={"model": model}) if model else own
    return base.model_copy(update={"roles": {r: role for r in ModelRole}})


def check_id(base: SessionConfig, plan: CheckPlan) -> str:
    """The same judge, writer, other model and tasks: the same id (a rerun replaces it)."""
    import hashlib

    judge = judge_of(base)
    said = {
        "judge": judge.model_dump(mode="json"),
        "writer": writer_of(base),
        "other": plan.other_model,
        "tasks": tasks_digest(plan.tasks),
        "seed": base.seed,
    }
    return "judge-check-" + hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()[:10]


def writer_of(base: SessionConfig) -> str:
    return model_name(base.role(ModelRole.DEBATE))


async def run_judge_check(
    ws: Workspace,
    plan: CheckPlan,
    base: SessionConfig,
    *,
    client: ClientLike | None = None,
    other_client: ClientLike | None = None,
) -> JudgeCheckReport:
    """The battery of `plan` on `base`'s judge, its answers written by `base`'s debate
    model (and, with `plan.other_model`, the judge's own model and the other one, on
    `other_client` when given), stored as a JudgeCheck node and returned. A spent budget
    leaves the tasks it reached short out (`skipped` in their count); an endpoint that
    is down stops the check with its error."""
    cid = check_id(base, plan)
    shared = SharedResources.of(ws.store, base)
    shared.pool.charge(await ws.store.aread(lambda s: s.calls(cid)))  # a rerun's budget is the check's

    async def metered(cfg: SessionConfig, handed: ClientLike | None) -> MeteredLLM:
        backend = await ws.backend(cfg, handed)
        return MeteredLLM.for_session(
            cfg, backend.client, calls=ws.store, session=cid, gate=shared.gate, pool=shared.pool
        )

    main = await metered(base, client)
    own = other = None
    if plan.other_model is not None:
        own = await metered(as_judge(base), client)
        other = await metered(as_judge(base, plan.other_model), other_client or client)
    writers = Writers(writer=main, judge=main, own=own, other=other)
    asking = Asking(cid, base.seed, base.role(ModelRole.JUDGE).final_tokens())

    async def one(task: Task) -> list[Judged] | None:
        try:
            return await battery(task, plan.near.get(task.id), writers, asking)
        except BudgetExhausted:  # not asked: a rerun with a raised budget asks it
            return None

    found = await asyncio.gather(*(one(t) for t in plan.tasks))
    pairs = [p for f in found if f is not None for p in f]
    await ws.store.flush()
    calls, tokens, cost = spent(await ws.store.aread(lambda s: s.calls(cid)))
    checks = measures(pairs, plan.other_model)
    report = JudgeCheckReport(
        id=cid, judge=judge_of(base), writer=writer_of(base), other_model=plan.other_model,
        checked_at=utcnow(), tasks=len(plan.tasks), built_in=plan.built_in,
        skipped=sum(1 for f in found if f is None), checks=checks, status=overall(checks),
        calls=calls, tokens=tokens, cost_usd=round(cost, 6),
    )  # fmt: skip
    ws.store.write(nodes=[check_record(report)])
    await ws.store.flush()
    return report
