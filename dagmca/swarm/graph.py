"""The swarm in the graph: a Swarm node, a Task node per task of the stream, an
ATTEMPTED edge from the persona to the task per attempt, and Snapshot nodes. All of
them in the store's `_swarms` session, beside the personas and evaluations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from dagmca.graph.schema import EdgeType, JSONScalar, NodeKind, NodeRecord
from dagmca.graph.status import RunStatus
from dagmca.graph.store_nodes import SWARM_SESSION, SnapshotNode, SwarmNode, TaskNode, TrackRecord
from dagmca.store.base import GraphStore
from dagmca.swarm.metrics import Snapshot
from dagmca.swarm.tasks import SwarmTask

# the personas' records a swarm's runs start from (its node's `memory`, JSON)
Records = dict[str, dict[str, TrackRecord]]  # agent -> task type -> its record
RECORDS: TypeAdapter[Records] = TypeAdapter(Records)


@dataclass(frozen=True)
class Attempt:
    router: str
    repeat: int
    position: int
    task: str
    task_type: str
    agent: str
    success: bool
    ms: int
    tokens: int
    answer: str
    reason: str


def swarm_node_id(swarm_id: str) -> str:
    return f"swarm/{swarm_id}"


def task_id(swarm_id: str, task: str) -> str:
    return f"swarm/{swarm_id}/task/{task}"


def swarm_record(
    swarm_id: str,
    tasks: int,
    agents: list[str],
    routers: list[str],
    repeats: int,
    settings: dict[str, Any],
    status: RunStatus = RunStatus.RUNNING,
    summary: dict[str, Any] | None = None,
    memory: Records | None = None,
) -> NodeRecord:
    return SwarmNode(
        id=swarm_node_id(swarm_id),
        session=SWARM_SESSION,
        swarm_id=swarm_id,
        tasks=tasks,
        agents=agents,
        routers=routers,
        repeats=repeats,
        settings=json.dumps(settings, sort_keys=True),
        summary=json.dumps(summary or {}, sort_keys=True),
        memory=json.dumps(RECORDS.dump_python(memory or {}, mode="json"), sort_keys=True),
        status=status,
    ).to_record()


def task_records(swarm_id: str, tasks: list[SwarmTask]) -> list[NodeRecord]:
    return [
        TaskNode(
            id=task_id(swarm_id, t.id),
            session=SWARM_SESSION,
            swarm_id=swarm_id,
            task_id=t.id,
            type=t.type,
            check=t.check or "reference",
            prompt=t.text,
            position=i,
        ).to_record()
        for i, t in enumerate(tasks)
    ]


def snapshot_record(swarm_id: str, router: str, repeat: int, snap: Snapshot) -> NodeRecord:
    node_id = f"swarm/{swarm_id}/{router}/{repeat}/snapshot/{snap.seen}"
    return SnapshotNode(
        id=node_id,
        session=SWARM_SESSION,
        swarm_id=swarm_id,
        router=router,
        repeat=repeat,
        seen=snap.seen,
        accuracy=snap.accuracy,
        s=snap.s,
        s_noise=snap.s_noise,
        d=snap.d,
        f_chi2=snap.f_chi2,
        f_dof=snap.f_dof,
        f_p=snap.f_p,
    ).to_record()


def attempt_props(swarm_id: str, a: Attempt) -> dict[str, JSONScalar]:
    return {
        "key": f"{swarm_id}/{a.router}/{a.repeat}",
        "swarm": swarm_id,
        "router": a.router,
        "repeat": a.repeat,
        "position": a.position,
        "task": a.task,
        "type": a.task_type,
        "agent": a.agent,
        "success": a.success,
        "ms": a.ms,
        "tokens": a.tokens,
        "answer": a.answer,
        "reason": a.reason,
    }


def attempts(
    store: GraphStore, swarm_id: str, router: str | None = None, repeat: int | None = None
) -> dict[int, Attempt]:
    """The stored attempts of a run, by position (of every run of the swarm when
    `router` is None: then keyed by their order in the store)."""
    found: dict[int, Attempt] = {}
    for e in store.edges(SWARM_SESSION, EdgeType.ATTEMPTED):
        p = e.props
        if p.get("swarm") != swarm_id or (
            router is not None and (p.get("router"), p.get("repeat")) != (router, repeat)
        ):
            continue
        a = Attempt(
            router=str(p["router"]),
            repeat=int(str(p["repeat"])),
            position=int(str(p["position"])),
            task=str(p["task"]),
            task_type=str(p["type"]),
            agent=str(p["agent"]),
            success=bool(p["success"]),
            ms=int(str(p["ms"])),
            tokens=int(str(p["tokens"])),
            answer=str(p["answer"]),
            reason=str(p["reason"]),
        )
        found[a.position if router is not None else len(found)] = a
    return found


def check_swarm(store: GraphStore, swarm_id: str) -> list[str]:
    """Broken invariants of a stored swarm: its Swarm node; every ATTEMPTED edge from a
    Persona to a Task of the swarm; no run attempting a position twice."""
    problems: list[str] = []
    node = store.get_node(swarm_node_id(swarm_id))
    if node is None or node.kind is not NodeKind.SWARM:
        problems.append(f"no Swarm node {swarm_node_id(swarm_id)}")
    seen: set[tuple[str, str, str]] = set()
    for e in store.edges(SWARM_SESSION, EdgeType.ATTEMPTED):
        if e.props.get("swarm") != swarm_id:
            continue
        source, target = store.get_node(e.source), store.get_node(e.target)
        if source is None or source.kind is not NodeKind.PERSONA:
            problems.append(f"ATTEMPTED edge from {e.source}, which is not a Persona")
        if target is None or target.kind is not NodeKind.TASK:
            problems.append(f"ATTEMPTED edge to {e.target}, which is not a Task")
        run = (str(e.props.get("router")), str(e.props.get("repeat")), str(e.props.get("position")))
        if run in seen:
            problems.append(f"run {run[0]}/{run[1]} attempted position {run[2]} twice")
        seen.add(run)
    return problems


def swarm_counts(store: GraphStore, swarm_id: str) -> tuple[int, int]:
    """The swarm's nodes (Swarm, Tasks, Snapshots) and ATTEMPTED edges."""
    nodes = [n for n in store.nodes(SWARM_SESSION) if n.props.get("swarm_id") == swarm_id]
    edges = [e for e in store.edges(SWARM_SESSION, EdgeType.ATTEMPTED) if e.props.get("swarm") == swarm_id]
    return len(nodes), len(edges)
