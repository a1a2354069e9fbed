"""A whole swarm: every router and repeat over the same stream, side by side on one
model client (so on one gate, limiter and budget), recorded in the graph and compared.

A swarm's id follows from its stream and its settings, so the same command run again
finds its runs: it goes on where a killed one stopped, and reads a finished one back
without a call."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.debate.contexts import persona_id
from dagmca.executor import preflight
from dagmca.graph.nodes import node_from_record
from dagmca.graph.status import RunStatus
from dagmca.graph.store_nodes import PersonaNode
from dagmca.llm.base import Completer
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.swarm import graph
from dagmca.swarm.agents import SYSTEM
from dagmca.swarm.client import swarm_client
from dagmca.swarm.graph import RECORDS, Records
from dagmca.swarm.loop import OnAttempt, StreamPlan, StreamRun, run_stream
from dagmca.swarm.options import SwarmOptions
from dagmca.swarm.report import SwarmReport, build_report
from dagmca.swarm.tasks import SwarmTask, load_stream
from dagmca.workspace import BaseWorkspace, ClientLike


def swarm_id(plan_settings: dict[str, object], stream: str) -> str:
    """A stable id: the stream's text and the settings that change what is run."""
    digest = hashlib.sha256((stream + json.dumps(plan_settings, sort_keys=True)).encode()).hexdigest()
    return f"swarm-{digest[:12]}"


def settings_of(plan: StreamPlan) -> dict[str, object]:
    return {
        "agents": plan.agents,
        "routers": plan.routers,
        "repeats": plan.repeats,
        "seed": plan.seed,
        "snapshot_every": plan.snapshot_every,
        "context": asdict(plan.context),
        "temperature": plan.temperature,
        "reply_tokens": plan.reply_tokens,
        "memory": plan.memory,
        "limits": plan.limits.model_dump(),
        # another system prompt asks other questions: another swarm, not a stale resume
        "prompt": hashlib.sha256(SYSTEM.encode()).hexdigest()[:12],
    }


def plan_for(tasks: list[SwarmTask], stream: str, cfg: SessionConfig, options: SwarmOptions) -> StreamPlan:
    """The swarm of `tasks` (read from the text `stream`) under `cfg` and `options`: the
    agents are the first settings' perspectives (then `agent 5`, ...), the affinity
    router's temperature the settings' `router_temperature`; its id follows from the
    stream, the plan and the model, so the same swarm asked again is found again."""
    names = list(dict.fromkeys(cfg.perspectives))[: options.agents]
    names += [f"agent {i}" for i in range(len(names) + 1, options.agents + 1)]
    plan = StreamPlan(
        swarm_id="",
        tasks=tasks,
        agents=names,
        routers=options.routers,
        repeats=options.repeats,
        seed=cfg.seed,
        snapshot_every=options.snapshot_every,
        context=options.context,
        temperature=cfg.router_temperature,
        memory=options.memory,
        unsafe_executor=options.unsafe_executor,
    )
    identity = {**settings_of(plan), "model": cfg.model, "endpoint": cfg.base_url or cfg.llm}
    return replace(plan, swarm_id=swarm_id(identity, stream))


def plan_swarm(path: Path, options: SwarmOptions, cfg: SessionConfig) -> StreamPlan:
    """The swarm of the stream in the file `path`: every task line checked (a bad one is
    a UserError naming it) before any call."""
    return plan_for(load_stream(path), path.read_text(encoding="utf-8"), cfg, options)


def remembered(store: GraphStore, plan: StreamPlan) -> Records:
    """The personas' records for the stream's types, by agent."""
    memory: Records = {}
    types = set(plan.types)
    for agent in plan.agents:
        stored = store.get_node(persona_id(agent))
        node = node_from_record(stored) if stored is not None else None
        if isinstance(node, PersonaNode):
            memory[agent] = {t: r for t, r in node.record.items() if t in types}
    return memory


def _start(store: GraphStore, plan: StreamPlan) -> Records:
    """The swarm's node and tasks, written once; the memory its runs start from."""
    node = store.get_node(graph.swarm_node_id(plan.swarm_id))
    if node is not None:
        return RECORDS.validate_json(str(node.props.get("memory") or "{}"))
    memory = remembered(store, plan) if plan.memory == "store" else {}
    record = graph.swarm_record(
        plan.swarm_id,
        len(plan.tasks),
        plan.agents,
        plan.routers,
        plan.repeats,
        settings_of(plan),
        memory=memory,
    )
    store.write([record, *graph.task_records(plan.swarm_id, plan.tasks)])
    return memory


async def run_swarm(
    plan: StreamPlan,
    model: Completer,
    store: BackgroundStore,
    embedder: Embedder | None = None,
    on_attempt: OnAttempt | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SwarmReport:
    """Every router and repeat over the stream; `on_start` hears how many attempts are
    left to make (the rest are read back), `on_attempt` each one made."""
    memory = await store.awrite(lambda s: _start(s, plan))
    if on_start is not None:
        made = await store.aread(lambda s: len(graph.attempts(s, plan.swarm_id)))
        on_start(len(plan.tasks) * len(plan.routers) * plan.repeats - made)
    jobs = [(r, k) for r in plan.routers for k in range(plan.repeats)]
    done = await asyncio.gather(
        *(run_stream(plan, r, k, model, store, embedder, on_attempt, memory) for r, k in jobs)
    )
    by_router: dict[str, list[StreamRun]] = {r: [] for r in plan.routers}
    for result in done:
        by_router[result.router].append(result)
    report = build_report(plan.swarm_id, plan.agents, plan.types, by_router)
    summary = {r.router: {"accuracy": r.accuracy, "s": r.s} for r in report.routers}
    record = graph.swarm_record(
        plan.swarm_id,
        len(plan.tasks),
        plan.agents,
        plan.routers,
        plan.repeats,
        settings_of(plan),
        RunStatus.BUDGET_EXHAUSTED if report.unmade else RunStatus.DONE,
        summary,
        memory,
    )
    await store.awrite(lambda s: s.write([record]))
    return report


async def swarm_in(
    ws: BaseWorkspace,
    plan: StreamPlan,
    cfg: SessionConfig,
    client: ClientLike | None = None,
    on_attempt: OnAttempt | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SwarmReport:
    """The swarm in a workspace: its store, its embedder (for D) and the settings'
    model behind one metered client. Code tasks need an executor that can raise its
    walls here, or the plan's `unsafe_executor` (see `dagmca.executor.preflight`)."""
    if any(t.is_code for t in plan.tasks):
        await asyncio.to_thread(preflight, plan.limits, unsafe=plan.unsafe_executor)
    model = await swarm_client(ws, cfg, plan.swarm_id, client)
    return await run_swarm(plan, model, ws.store, ws.embedder, on_attempt, on_start)
