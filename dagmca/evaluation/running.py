"""Running an evaluation in a Workspace: every (arm, task, repeat) as a question
session, the matched vote arms sized from their target's calls on the same task, the
ledger's controls, the judged pairs, and the Evaluation in the graph.

Resumable by construction: a session's id follows from (eval, arm, task, repeat), so a
rerun finds a finished session and reads it instead of running it, resumes one that
was cut short, and the judge's calls go through the store's response cache, so a
finished eval run again makes no call. Costs are read from the call log, not from what
this run spent, so a rerun reports what the arms cost when they ran."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.evaluation.arms import SAMPLE_SEEDS, Arm, session_id, vote_for
from dagmca.evaluation.assemble import build_report, noise_arms
from dagmca.evaluation.breakdown import Cost
from dagmca.evaluation.consistency import most_consistent, samples_for, voted
from dagmca.evaluation.control import Controls, stored_controls
from dagmca.evaluation.firstvote import extract, first_round, first_vote, unread
from dagmca.evaluation.graph import evaluation_record, ran_edge
from dagmca.evaluation.identity import identity, refuse_other_settings, same_task
from dagmca.evaluation.judgecheck.graph import judge_of, latest_check
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION
from dagmca.evaluation.pairs import Finished, judge_all, pairs
from dagmca.evaluation.plan import EvalPlan, control_arm, traced_arms
from dagmca.evaluation.reading import read_run
from dagmca.evaluation.records import RunRecord, Verdict
from dagmca.evaluation.report import EvalReport
from dagmca.evaluation.sessions import EvalSessions
from dagmca.evaluation.tasks import Task
from dagmca.graph import (
    EvaluationNode,
    ModelRole,
    NodeKind,
    NodeRecord,
    RunStatus,
    SessionStatus,
    node_from_record,
)
from dagmca.graph.calls import prompt_tokens, spent
from dagmca.llm.base import Completer
from dagmca.llm.stack.base import BudgetExhausted
from dagmca.workspace import BaseWorkspace as Workspace
from dagmca.workspace import ClientLike, settings_from

__all__ = ["EvalPlan", "default_parallel", "run_eval"]

T = TypeVar("T")


def default_parallel(cfg: SessionConfig) -> int:
    """1 on the local model (its server is the bottleneck: parallel sessions only queue
    there), else as many sessions as calls may be in flight: an arm's session is the
    main debate alone, with fewer calls ready at once than a build's full session, and
    the shared gate holds the calls to `concurrency` however many sessions wait on it."""
    return 1 if cfg.llm == "local" else max(2, cfg.concurrency)


class _Eval:
    def __init__(
        self,
        ws: Workspace,
        plan: EvalPlan,
        base: SessionConfig,
        client: ClientLike | None,
        on_done: Callable[[RunRecord], None] | None,
        old: NodeRecord | None,
    ) -> None:
        self.ws, self.plan, self.base, self.client, self.on_done = ws, plan, base, client, on_done
        # one gate, one rate limiter per endpoint and one spend for every session, control and the judge
        self.eval_sessions = EvalSessions(ws, base, client)
        self.store = ws.store
        self.values = base.model_dump()
        self.limit = asyncio.Semaphore(max(1, plan.parallel or default_parallel(base)))
        self.done: dict[tuple[str, str, int], Finished] = {}
        self.skipped = 0  # sessions not run, for the budget
        self.controls = Controls(ws, self.eval_sessions, stored_controls(old), self.limit)

    async def one(
        self, arm: Arm, task: Task, repeat: int, extra: dict[str, Any], sample: int | None = None
    ) -> Finished | None:
        """(arm, task, repeat)'s session, run, resumed or read; `sample`: one of a
        self-consistency vote's samples, kept apart from the arm's own record."""
        sid = session_id(self.plan.eval_id, arm, task.id, repeat, sample)
        seed = self.base.seed + repeat + (SAMPLE_SEEDS * sample if sample else 0)
        cfg = settings_from({**arm.settings(self.values, seed), **extra})
        async with self.limit:
            node = await self.store.aread(lambda s: s.get_node(sid))
            same_task(self.plan.eval_id, node, task)
            reused = _ended(node)
            if reused:  # what it spent in an earlier run counts against the eval's budgets
                self.eval_sessions.pool.charge(await self.store.aread(lambda s: s.calls(sid)))
            elif node is None:
                if self.eval_sessions.spent_out():  # not run: a rerun with a raised budget runs it
                    self.skipped += 1
                    return None
                # under its lease: another eval of this id, or a `dagmca resume` of the
                # session, may be writing it now (refused, nothing written)
                await self.eval_sessions.run(cfg, sid, task.passage, task.question)
            else:
                self.eval_sessions.pool.charge(await self.store.aread(lambda s: s.calls(sid)))
                await self.eval_sessions.resume(sid)
        ran = ran_edge(self.plan.eval_id, sid, arm=arm.name, task=task.id, repeat=repeat, sample=sample)
        self.store.write(edges=[ran])
        tol = self.plan.tolerance
        done = await self.store.aread(lambda s: read_run(s, arm, cfg.protocol, task, repeat, sid, tol))
        if reused:
            done = Finished(replace(done.record, reused=True), done.final_text)
        if sample is None:
            self.finish(arm, task, repeat, done)
        return done

    def finish(self, arm: Arm, task: Task, repeat: int, done: Finished) -> None:
        self.done[(arm.name, task.id, repeat)] = done
        if self.on_done is not None:
            self.on_done(done.record)

    async def matched(self, arm: Arm, task: Task, repeat: int) -> Finished | None:
        target = self.done.get((str(arm.kind.matched_to), task.id, repeat))
        if target is None:  # its target was not run: nothing to match
            self.skipped += 1
            return None
        if arm.kind.sampled:
            return await self.sampled(arm, task, repeat, target.record)
        return await self.one(arm, task, repeat, vote_for(target.record.calls))

    async def derive(self, arm: Arm, task: Task, repeat: int) -> None:
        """first-vote: its source's first-round answers, each read by the short-answer
        step; a source not run is nothing to read, a source with no first round is
        unread for this task."""
        source = self.done.get((str(arm.kind.matched_to), task.id, repeat))
        if source is None:
            self.skipped += 1
            return
        sid = source.record.session
        first = await self.store.aread(lambda s: first_round(s, sid))
        if not first.turns:
            self.finish(arm, task, repeat, unread(arm.name, task, repeat, source.record))
            return
        log = f"{sid}-first-vote"
        llm = await self.eval_sessions.metered(log)
        cfg = settings_from(arm.settings(self.values, self.base.seed + repeat))
        try:
            said = await _all(
                [extract(llm, task, cfg, text, f"{sid}/main", cfg.seed) for _, text in first.turns]
            )
        except BudgetExhausted:  # not read: a rerun with a raised budget reads it
            self.skipped += 1
            return
        await self.store.flush()
        made = await self.store.aread(lambda s: s.calls(log))
        done = first_vote(arm.name, task, repeat, source.record, said, first.calls, made, self.plan.tolerance)
        self.finish(arm, task, repeat, Finished(replace(done.record, reused=source.record.reused), None))

    async def sampled(self, arm: Arm, task: Task, repeat: int, target: RunRecord) -> Finished | None:
        """Self-consistency: one sample, then as many more as match the target's spend
        on this task (found from the first sample's), then the plurality answer."""
        t = self.plan.vote_temperature
        # a role's own temperature would replace the samples': theirs is the vote's
        roles = {
            name: {**own, "temperature": t} if own.get("temperature") is not None else own
            for name, own in (self.values.get("roles") or {}).items()
        }
        hot = {"temperature": t, "roles": roles}
        first = await self.one(arm, task, repeat, hot, sample=0)
        if first is None:
            return None
        n = samples_for(self.plan.match, target.calls, target.tokens, first.record.calls, first.record.tokens)
        rest = await _all([self.one(arm, task, repeat, hot, sample=k) for k in range(1, n)])
        found = [first, *(r for r in rest if r is not None)]
        picked, extra = None, (0, 0, 0.0, 0)
        if task.judged and len(found) > 1:  # no rule clusters open answers: one call picks
            # logged apart from the samples' own, which size the vote on a rerun
            log = f"{first.record.session}-usc"
            llm = await self.eval_sessions.metered(log)
            tokens = self.base.role(ModelRole.FINAL).flag_tokens()
            picked = await most_consistent(llm, task.question, found, max_tokens=tokens, seed=self.base.seed)
            await self.store.flush()
            made = await self.store.aread(lambda s: s.calls(log))
            extra = (*spent(made), prompt_tokens(made))
        done = voted(arm.name, task, repeat, found, self.plan.tolerance, picked)
        if all(f.record.reused for f in found):
            done = Finished(replace(done.record, reused=True), done.final_text)
        if extra[0]:
            r = done.record
            calls, tokens, cost, prompt = (
                r.calls + extra[0],
                r.tokens + extra[1],
                r.cost_usd + extra[2],
                extra[3],
            )
            more = replace(
                r, calls=calls, tokens=tokens, cost_usd=cost, prompt_tokens=r.prompt_tokens + prompt
            )
            done = Finished(more, done.final_text)
        self.finish(arm, task, repeat, done)
        return done

    async def control(self, task: Task, repeat: int) -> None:
        """The ledger's control of each traced arm on (task, repeat), one after another:
        each opens the lone agent's session, under its lease."""
        lone = control_arm(self.plan.arms)
        if lone is None:
            return
        for arm in traced_arms(self.plan.arms, self.base):
            debate, alone = (self.done.get((a.name, task.id, repeat)) for a in (arm, lone))
            await self.controls.trace(arm, task, repeat, debate, alone)

    async def sessions(self) -> None:
        plain = [a for a in self.plan.arms if a.kind.matched_to is None]
        matched = [a for a in self.plan.arms if a.kind.matched_to is not None and not a.kind.derived]
        derived = [a for a in self.plan.arms if a.kind.derived]

        async def unit(task: Task, repeat: int) -> None:
            # a task's matched arms start once its own targets end, not once every
            # task's have: no wave of sessions waits on the slowest of another wave, so
            # --parallel-sessions stay busy to the end
            await _all([self.one(a, task, repeat, {}) for a in plain])
            for a in derived:
                await self.derive(a, task, repeat)
            await _all([*(self.matched(a, task, repeat) for a in matched), self.control(task, repeat)])

        await _all([unit(t, r) for t in self.plan.tasks for r in range(self.plan.repeats)])


def finished(old: NodeRecord | None, plan: EvalPlan) -> bool:
    """An earlier run of this eval finished every session, answer and verdict of `plan`:
    its tasks, arms and repeats, with nothing skipped for a budget and nothing unread."""
    node = node_from_record(old) if old is not None else None
    if not isinstance(node, EvaluationNode) or node.status is not RunStatus.DONE:
        return False
    try:
        summary = json.loads(node.summary)
    except json.JSONDecodeError:
        return False
    same = (
        node.task_ids == [t.id for t in plan.tasks]
        and {a.name for a in plan.arms} <= set(node.arms)
        and node.repeats == plan.repeats
    )
    return same and not any(summary.get(k) for k in ("skipped", "unjudged", "no_verdict"))


def _ended(node: NodeRecord | None) -> bool:
    """A stored session that is only read: its run ended, so it has its answer (or has
    none for good); a running, interrupted or failed one is finished first."""
    return node is not None and (node.kind is not NodeKind.SESSION or SessionStatus.of(node).ended())


async def _all(work: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Every coroutine at once; when one fails (the endpoint is down), the others are
    cancelled before the failure is raised, so none goes on writing to a workspace that
    is closing. What they finished is kept, and a rerun resumes the rest."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def run_eval(
    ws: Workspace,
    plan: EvalPlan,
    base: SessionConfig,
    *,
    client: ClientLike | None = None,
    judge: Completer | None = None,
    on_done: Callable[[RunRecord], None] | None = None,
) -> EvalReport:
    """Run (or finish) `plan` in `ws` with `base` settings under every arm's own.
    `client`: the debaters' client instead of the settings' backend; `judge`: the
    judge's (default: a metered client of the settings' judge role, on the store's
    cache, its calls logged under the eval id); `on_done`: told of each session as it
    ends (or is found finished), for progress.

    An eval of this id stored under other settings (another model, endpoint, sampling,
    prompt version or arm setting) is refused with the difference named; a judge that
    cannot be reached stops the eval before any session runs."""
    eval_id = plan.eval_id
    old = await ws.store.aread(lambda s: s.get_node(f"{eval_id}/evaluation"))
    e = _Eval(ws, plan, base, client, on_done, old)
    made_with = identity(base, plan.arms, vote_temperature=plan.vote_temperature, match=plan.match)
    if old is not None:
        refuse_other_settings(eval_id, old, made_with, base)
    header: dict[str, Any] = {
        "task_ids": [t.id for t in plan.tasks], "arms": [a.name for a in plan.arms], "repeats": plan.repeats,
        "judge_prompt_version": JUDGE_PROMPT_VERSION, "settings": _settings(base, plan, made_with),
        "created_at": old.created_at if old is not None else None,
    }  # fmt: skip
    needs_judge = any(t.judged or plan.judge_all for t in plan.tasks) and (
        len(plan.arms) > 1 or plan.noise_floor
    )
    # a finished eval run again asks nothing, the pre-flight included: its sessions are
    # read, its judge's and extractions' replies come from the cache
    if needs_judge and judge is None and not finished(old, plan):
        await e.eval_sessions.check_judge(eval_id)
    e.store.write(nodes=[evaluation_record(eval_id, judge_model="", **header)])
    # traced (--otel): one trace, the eval's span the parent of every session's
    traced = {"dagmca.eval": eval_id}
    with tracing.group("eval", otel=base.otel, content=base.otel_content, attributes=traced):
        await e.sessions()
    verdicts: list[Verdict] = []
    judge_model = ""
    if needs_judge:
        # the judge's calls of earlier runs count against the eval's budgets; asked again,
        # they are answered from the cache
        sessions = e.eval_sessions
        sessions.pool.charge(await e.store.aread(lambda s: s.calls(eval_id)))
        llm, judge_model = (judge, _model_of(judge)) if judge is not None else await sessions.judge(eval_id)
        jobs = pairs(
            plan.tasks, plan.arms, plan.repeats, plan.judge_trials, judge_all=plan.judge_all,
            noise=noise_arms(plan, base),
        )  # fmt: skip
        found = await judge_all(
            jobs, e.done, llm, eval_id=eval_id, max_tokens=base.role(ModelRole.JUDGE).final_tokens(),
            seed=base.seed, run_all=_all,
        )  # fmt: skip
        verdicts = found.verdicts
        e.store.write(edges=found.edges)
    await e.store.flush()
    calls, tokens, cost = spent(await e.store.aread(lambda s: s.calls(eval_id)))
    judged = Cost(calls=calls, tokens=tokens, cost_usd=round(cost, 6))
    runs = [d.record for d in e.done.values()]
    check = await e.store.aread(lambda s: latest_check(s, judge_of(base))) if needs_judge else None
    report = build_report(
        plan, base, runs, verdicts, skipped=e.skipped + e.controls.skipped,
        judge_model=judge_model if needs_judge else None, judge_cost=judged, check=check,
        controls=e.controls.rows,
    )  # fmt: skip
    summary = report.model_dump(mode="json", exclude={"results"})
    e.store.write(nodes=[evaluation_record(eval_id, judge_model=judge_model, summary=summary, **header)])
    await e.store.flush()
    return report


def _model_of(judge: Completer) -> str:
    return str(getattr(judge, "model", ""))


def _settings(base: SessionConfig, plan: EvalPlan, made_with: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": base.model, "llm": base.llm, "seed": base.seed, "tolerance": plan.tolerance,
        "judge_all": plan.judge_all, "judge_trials": plan.judge_trials, "noise_floor": plan.noise_floor,
        "arm_settings": {a.name: a.overrides for a in plan.arms}, "identity": made_with,
    }  # fmt: skip
