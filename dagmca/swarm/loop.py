"""One run of the swarm: a router and a repeat over the whole stream, in order.

Each task goes to the agent its router picks; the agent answers with its own solved
examples in its prompt; the answer is checked (scored against the reference, or run
against the tests by the executor); a success joins the agent's context. Every
attempt is one write: its ATTEMPTED edge and the persona's record, together, so the
store never holds one without the other.

Resumable by construction: a rerun reads the run's ATTEMPTED edges back, replays them
into the agents' contexts and the router's records in stream order, and goes on from
the first task without one. A killed run attempts no task twice; a finished one makes
no call."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from dagmca.config.groups import ROUTER_TEMPERATURE
from dagmca.debate.contexts import persona_id
from dagmca.debate.dag.personas import new_persona
from dagmca.debate.router import Router
from dagmca.executor import Limits, check
from dagmca.graph.nodes import node_from_record
from dagmca.graph.schema import EdgeRecord, EdgeType, NodeRecord, utcnow
from dagmca.graph.store_nodes import SWARM_SESSION, PersonaNode, TrackRecord
from dagmca.llm.base import CallMeta, Completer, Request
from dagmca.llm.stack.base import BudgetExhausted
from dagmca.llm.tokens import TokenCounter
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.swarm import graph
from dagmca.swarm.agents import Agent, ContextOptions, Example, messages
from dagmca.swarm.graph import Attempt, Records
from dagmca.swarm.metrics import Snapshot, snapshot
from dagmca.swarm.routers import new_router, pick
from dagmca.swarm.tasks import SwarmTask, extract_code, score_reference


@dataclass(frozen=True)
class StreamPlan:
    swarm_id: str
    tasks: list[SwarmTask]
    agents: list[str]
    routers: list[str]
    repeats: int = 1
    seed: int = 0
    snapshot_every: int = 20
    context: ContextOptions = field(default_factory=ContextOptions)
    temperature: float = ROUTER_TEMPERATURE  # the affinity softmax's (the setting's default)
    reply_tokens: int = 512
    limits: Limits = field(default_factory=Limits)
    # store: every run's router starts from the personas' records by type (debates'
    # and earlier swarms'); none: from nothing, so routers compare on equal terms
    memory: Literal["none", "store"] = "none"
    # run code tasks where the executor cannot raise its walls (changes no result, so
    # not a setting of the swarm's id)
    unsafe_executor: bool = False

    @property
    def types(self) -> list[str]:
        return sorted({t.type for t in self.tasks})


@dataclass
class StreamRun:
    """One router and repeat over the stream: its attempts in order, its snapshots, its
    agents and router as they learned."""

    router: str
    repeat: int
    attempts: list[Attempt]
    snapshots: list[Snapshot]
    agents: list[Agent]
    router_state: Router
    replayed: int = 0  # attempts read back from an earlier run, not made now
    unmade: int = 0  # tasks left unattempted: the budget was spent

    @property
    def accuracy(self) -> float:
        return sum(a.success for a in self.attempts) / len(self.attempts) if self.attempts else 0.0


OnAttempt = Callable[[Attempt], None]


def run_seed(seed: int, router: str, repeat: int) -> int:
    """The seed of one run: each router and repeat draws apart, reproducibly."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{router}:{repeat}".encode()).digest()[:4], "big")


async def run_stream(
    plan: StreamPlan,
    router_kind: str,
    repeat: int,
    model: Completer,
    store: BackgroundStore,
    embedder: Embedder | None = None,
    on_attempt: OnAttempt | None = None,
    prior: Records | None = None,
) -> StreamRun:
    seed = run_seed(plan.seed, router_kind, repeat)
    agents = [Agent(name) for name in plan.agents]
    by_name = {a.name: a for a in agents}
    router = new_router(router_kind, plan.agents, seed, plan.temperature)
    for name, by_type in (prior or {}).items():
        for task_type, record in by_type.items():
            router.history[task_type][name] = record.model_copy()
    earlier = await store.aread(lambda s: graph.attempts(s, plan.swarm_id, router_kind, repeat))
    result = StreamRun(router_kind, repeat, [], [], agents, router)
    counter = TokenCounter()
    for position, task in enumerate(plan.tasks):
        attempt = earlier.get(position)
        if attempt is None:
            agent = by_name[pick(router, router_kind, task.type, f"{repeat}/{position}")]
            try:
                attempt = await _attempt(
                    plan, router_kind, repeat, position, task, agent, model, counter, seed
                )
            except BudgetExhausted:  # the rest is left for a rerun with a raised budget
                result.unmade = len(plan.tasks) - position
                break
            await store.awrite(functools.partial(_record, swarm_id=plan.swarm_id, attempt=attempt))
            if on_attempt is not None:
                on_attempt(attempt)
        else:
            result.replayed += 1
        _learn(result, by_name[attempt.agent], task, attempt)
        if len(result.attempts) % plan.snapshot_every == 0 or len(result.attempts) == len(plan.tasks):
            await _snapshot(plan, result, embedder, seed, store)
    last = result.snapshots[-1].seen if result.snapshots else 0
    if result.unmade and len(result.attempts) > last:
        await _snapshot(plan, result, embedder, seed, store)  # where the budget stopped it
    return result


async def _snapshot(
    plan: StreamPlan, result: StreamRun, embedder: Embedder | None, seed: int, store: BackgroundStore
) -> None:
    seen = len(result.attempts)
    successes = sum(a.success for a in result.attempts)
    snap = snapshot(result.agents, plan.types, seen, successes, embedder, seed, plan.snapshot_every)
    result.snapshots.append(snap)
    record = graph.snapshot_record(plan.swarm_id, result.router, result.repeat, snap)
    await store.awrite(functools.partial(_write, record=record))


def _learn(result: StreamRun, agent: Agent, task: SwarmTask, attempt: Attempt) -> None:
    result.attempts.append(attempt)
    result.router_state.update(task.type, agent.name, attempt.success)
    agent.examples.append(Example(task.type, task.text, attempt.answer, attempt.success, attempt.position))


async def _attempt(
    plan: StreamPlan,
    router_kind: str,
    repeat: int,
    position: int,
    task: SwarmTask,
    agent: Agent,
    model: Completer,
    counter: TokenCounter,
    seed: int,
) -> Attempt:
    started = time.monotonic()
    prompt = messages(agent, task, plan.context, counter)
    meta = CallMeta(agent=agent.name, debate=f"{plan.swarm_id}/{router_kind}/{repeat}", phase="swarm")
    done = await model.complete(Request(prompt, max_tokens=plan.reply_tokens, seed=seed, meta=meta))
    answer = done.text or ""
    if task.is_code:
        outcome = await asyncio.to_thread(
            check, extract_code(answer), task.test_code(), task.entry_point, plan.limits,
            unsafe=plan.unsafe_executor,
        )  # fmt: skip
        success, reason = outcome.passed, outcome.reason
    else:
        success = score_reference(task, answer)
        reason = "right" if success else "wrong"
    return Attempt(
        router=router_kind,
        repeat=repeat,
        position=position,
        task=task.id,
        task_type=task.type,
        agent=agent.name,
        success=success,
        ms=int((time.monotonic() - started) * 1000),
        tokens=done.usage.prompt_tokens + done.usage.completion_tokens,
        answer=answer,
        reason=reason,
    )


def _write(store: GraphStore, record: NodeRecord) -> None:
    store.write([record])


def _record(store: GraphStore, swarm_id: str, attempt: Attempt) -> None:
    """The attempt's edge and its persona's record, in one write."""
    stored = store.get_node(persona_id(attempt.agent))
    node = node_from_record(stored) if stored is not None else None
    persona = node if isinstance(node, PersonaNode) else new_persona(attempt.agent)
    before = persona.record.get(attempt.task_type, TrackRecord())
    this = TrackRecord(trials=1, successes=int(attempt.success))
    persona.record = {**persona.record, attempt.task_type: before + this}
    persona.trials += 1
    persona.successes += int(attempt.success)
    persona.updated_at = utcnow()
    edge = EdgeRecord(
        source=persona.id,
        target=graph.task_id(swarm_id, attempt.task),
        type=EdgeType.ATTEMPTED,
        session=SWARM_SESSION,
        props=graph.attempt_props(swarm_id, attempt),
    )
    store.write([persona.to_record()], [edge])
