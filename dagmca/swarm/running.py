"""A whole swarm: every router and repeat over the same stream, side by side on one
model client (so on one gate, limiter and budget), recorded in the graph and compared.

A swarm's id follows from its stream and its settings, so the same command run again
finds its runs: it goes on where a killed one stopped, and reads a finished one back
without a call."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, replace

from dagmca.config import SessionConfig
from dagmca.evaluation.judging import Completer
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore
from dagmca.swarm import graph
from dagmca.swarm.agents import ContextOptions
from dagmca.swarm.client import swarm_client
from dagmca.swarm.loop import OnAttempt, RunResult, StreamPlan, run_stream
from dagmca.swarm.report import SwarmReport, build_report
from dagmca.swarm.tasks import SwarmTask
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
        "limits": plan.limits.model_dump(),
    }


def plan_for(
    tasks: list[SwarmTask],
    stream: str,
    cfg: SessionConfig,
    *,
    agents: int = 4,
    routers: list[str] | None = None,
    repeats: int = 1,
    snapshot_every: int = 20,
    context: ContextOptions | None = None,
    temperature: float = 0.05,
) -> StreamPlan:
    """The swarm of `tasks` (read from the text `stream`) under `cfg`: the agents are
    the first settings' perspectives (then `agent 5`, ...), its id follows from the
    stream, the plan and the model, so the same swarm asked again is found again."""
    names = list(dict.fromkeys(cfg.perspectives))[:agents]
    names += [f"agent {i}" for i in range(len(names) + 1, agents + 1)]
    plan = StreamPlan(
        swarm_id="",
        tasks=tasks,
        agents=names,
        routers=routers or ["affinity"],
        repeats=repeats,
        seed=cfg.seed,
        snapshot_every=snapshot_every,
        context=context or ContextOptions(),
        temperature=temperature,
    )
    identity = {**settings_of(plan), "model": cfg.model, "endpoint": cfg.base_url or cfg.llm}
    return replace(plan, swarm_id=swarm_id(identity, stream))


def _start(store: GraphStore, plan: StreamPlan) -> None:
    node = store.get_node(graph.swarm_node_id(plan.swarm_id))
    if node is not None:
        return
    store.write(
        [
            graph.swarm_record(
                plan.swarm_id, len(plan.tasks), plan.agents, plan.routers, plan.repeats, settings_of(plan)
            ),
            *graph.task_records(plan.swarm_id, plan.tasks),
        ]
    )


async def run_swarm(
    plan: StreamPlan,
    model: Completer,
    store: BackgroundStore,
    embedder: Embedder | None = None,
    on_attempt: OnAttempt | None = None,
) -> SwarmReport:
    await store.aread(lambda s: _start(s, plan))
    jobs = [(r, k) for r in plan.routers for k in range(plan.repeats)]
    done = await asyncio.gather(
        *(run_stream(plan, r, k, model, store, embedder, on_attempt) for r, k in jobs)
    )
    by_router: dict[str, list[RunResult]] = {r: [] for r in plan.routers}
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
        "done",
        summary,
    )
    await store.aread(lambda s: s.write([record]))
    return report


async def swarm_in(
    ws: BaseWorkspace,
    plan: StreamPlan,
    cfg: SessionConfig,
    client: ClientLike | None = None,
    on_attempt: OnAttempt | None = None,
) -> SwarmReport:
    """The swarm in a workspace: its store, its embedder (for D) and the settings'
    model behind one metered client."""
    model = await swarm_client(ws, cfg, plan.swarm_id, client)
    return await run_swarm(plan, model, ws.store, ws.embedder, on_attempt)
