"""Agents that persist across sessions: one Persona per perspective in the
store, whose kept contributions and record by tension category seed a new session's
agents and router, and which the session's seats link to (PLAYS).

A session reads its personas once, when it starts, and keeps that snapshot on its
Session node (`agent_memory`): a resumed run starts from the same memory, so it asks
the same prompts and replays them from the cache. It adds what it learned when it
ends, once (a session already listed on a persona is not counted twice).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from dagmca.debate.contexts import persona_id, slug
from dagmca.debate.state import Memory, SessionState
from dagmca.graph import PERSONA_SESSION, PersonaNode, SessionNode, node_from_record, utcnow
from dagmca.graph.store_nodes import PersonaMemory, TrackRecord
from dagmca.store.base import GraphStore

MEMORY: TypeAdapter[Memory] = TypeAdapter(Memory)
Learned = dict[str, TrackRecord]  # what a session added to a persona's record, by category


def new_persona(perspective: str) -> PersonaNode:
    return PersonaNode(
        id=persona_id(perspective), session=PERSONA_SESSION, name=slug(perspective), perspective=perspective
    )


async def stored_persona(state: SessionState, perspective: str) -> PersonaNode | None:
    record = await state.handles.store.aread(lambda s: s.get_node(persona_id(perspective)))
    if record is None:
        return None
    node = node_from_record(record)
    return node if isinstance(node, PersonaNode) else None


async def load(state: SessionState, session: SessionNode, earlier: dict[str, Any] | None) -> None:
    """Seed the agents' contexts and the router from the store's personas (or, for a
    resumed session, from the memory it started with); create the personas missing."""
    cfg = state.handles.config
    if cfg.agent_memory != "store":
        return
    remembered = (earlier or {}).get("agent_memory")
    memory: Memory
    personas = {p: await stored_persona(state, p) for p in dict.fromkeys(cfg.perspectives)}
    if isinstance(remembered, str) and remembered:
        memory = MEMORY.validate_json(remembered)
    else:
        memory = {
            p: PersonaMemory(kept=list(node.kept), record=dict(node.record)) if node else PersonaMemory()
            for p, node in personas.items()
        }
    dumped = MEMORY.dump_python(memory, mode="json")
    session.agent_memory = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    for perspective, mem in memory.items():
        state.contexts.seed(perspective, list(mem.kept))
        for category, record in mem.record.items():
            state.router.history[category][perspective] = record.model_copy()
    new = [new_persona(p) for p, node in personas.items() if node is None]
    if new:
        state.handles.store.write([n.to_record() for n in new])
    state.memory = memory


async def save(state: SessionState) -> None:
    """Add what this session learned to each persona, once: its sessions gain this one,
    its record this session's trials, its kept contributions the session's latest.
    Each persona is read and written in one step on the store's thread, so sessions
    ending together in one build do not overwrite each other's additions."""
    cfg = state.handles.config
    if cfg.agent_memory != "store":
        return
    for perspective, mem in state.memory.items():
        learned: Learned = {}
        for category, agents in state.router.history.items():
            now = agents.get(perspective)
            if now is not None:
                learned[category] = now - mem.record.get(category, TrackRecord())
        kept = state.contexts.kept(perspective)
        survivals = state.contexts.survivals[perspective]

        def apply(store: GraphStore, perspective: str = perspective, learned: Learned = learned,
                  kept: list[str] = kept, survivals: int = survivals) -> None:  # fmt: skip
            record = store.get_node(persona_id(perspective))
            stored = node_from_record(record) if record is not None else None
            node = stored if isinstance(stored, PersonaNode) else new_persona(perspective)
            if state.handles.session_id in node.sessions:
                return
            totals = dict(node.record)
            for category, more in learned.items():
                totals[category] = totals.get(category, TrackRecord()) + more
            node.record = {c: totals[c] for c in sorted(totals) if totals[c].trials}
            node.trials = sum(r.trials for r in node.record.values())
            node.successes = sum(r.successes for r in node.record.values())
            node.sessions = [*node.sessions, state.handles.session_id]
            node.kept = kept or node.kept
            node.kept_total += survivals
            node.updated_at = utcnow()
            store.write([node.to_record()])

        await state.handles.store.awrite(apply)
