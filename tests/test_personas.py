"""Agents that persist across sessions: one Persona per perspective in the
store, seeded into each session's router and contexts, updated when a session ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmca.debate.contexts import persona_id
from dagmca.debate.router import Router
from dagmca.graph import PERSONA_SESSION, EdgeType, NodeKind, PersonaNode, TensionCategory, node_from_record
from dagmca.graph.store_nodes import TrackRecord
from dagmca.store.check import check_store
from dagmca.store.networkx_view import session_records
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.sessions import QUESTIONS, RunSession, run_scripted, scripted

PERSPECTIVES = ("analytical", "creative", "critical", "practical")
ROUTED = dict(
    agent_memory="store", router="greedy", perspectives=PERSPECTIVES, cpp=2, depth=2, rounds=1,
    max_depth=1, max_branches=2, max_revisits=0, success_threshold=0.0, monitor_every="turn",
)  # fmt: skip


def personas(store: SQLiteStore) -> dict[str, PersonaNode]:
    nodes = [node_from_record(n) for n in store.nodes(PERSONA_SESSION, NodeKind.PERSONA)]
    return {p.perspective: p for p in nodes if isinstance(p, PersonaNode)}


@pytest.mark.slow
def test_two_sessions_on_one_store_share_their_agents(run_fake: RunSession, tmp_path: Path) -> None:
    _, first, _ = run_fake(scripted(QUESTIONS[:2]), session="one", **ROUTED)
    store = first.handles.store.store
    assert isinstance(store, SQLiteStore)
    after_one = personas(store)
    assert set(after_one) == set(PERSPECTIVES)
    assert all(p.sessions == ["one"] for p in after_one.values())
    learned = {p: node.record for p, node in after_one.items() if node.record}
    assert learned, "the branches of the first session gave some agent a record"
    assert sum(p.kept_total for p in after_one.values()) > 0, "contributions survived"

    _, second, _ = run_fake(scripted(QUESTIONS[:2]), session="two", **ROUTED)
    # the second session started from what the first learned, and says so on its node
    memory = json.loads(str(store.get_node("two").props["agent_memory"]))  # type: ignore[union-attr]
    # (each record stored as the pair [trials, successes])
    stored = {p: {c: r.model_dump() for c, r in record.items()} for p, record in learned.items()}
    assert {p: m["record"] for p, m in memory.items() if m["record"]} == stored
    assert {p: m["kept"] for p, m in memory.items()} == {p: n.kept for p, n in after_one.items()}
    # its routing read that record: the staff of its first branch is the greedy choice
    # of a router holding it
    router = Router("greedy", PERSPECTIVES)
    for perspective, record in learned.items():
        for category, one in record.items():
            router.history[category][perspective] = one.model_copy()
    branch = min((d for d in second.graph.debates.values() if d.origin.value == "branch"), key=lambda d: d.id)
    tension = second.graph.tensions[
        next(e.target for e in store.edges("two", EdgeType.EXPLORES) if e.source == branch.id)
    ]
    assert branch.staff == router.choose(tension.category.value, 2, branch.id)

    after_two = personas(store)
    assert all(p.sessions == ["one", "two"] for p in after_two.values())
    assert sum(p.trials for p in after_two.values()) > sum(p.trials for p in after_one.values())
    # the seats of each session PLAY their persona; each session checks out whole
    for session in ("one", "two"):
        plays = store.edges(session, EdgeType.PLAYS)
        assert plays and {e.target for e in plays} <= {persona_id(p) for p in PERSPECTIVES}
        assert check_store(store, session) == []
        nodes, _ = session_records(store, session)
        assert {n.kind for n in nodes} >= {NodeKind.PERSONA}

    listed = dagmca("agents", "--json", "--store", str(store.path), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {r["perspective"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == set(PERSPECTIVES)
    assert all(r["sessions"] == 2 and r["name"] == r["perspective"] for r in rows.values())
    assert {
        p: {c: TrackRecord(trials=v["trials"], successes=v["successes"]) for c, v in r["record"].items()}
        for p, r in rows.items()
    } == {p: n.record for p, n in after_two.items()}


def test_a_learned_record_decides_the_staff_and_session_memory_ignores_it(tmp_path: Path) -> None:
    """A store whose `practical` agent has won every time: a greedy router staffs the
    first branch with it first; with --agent-memory session the pool order decides."""
    staffs = {}
    for memory in ("store", "session"):
        store = SQLiteStore(tmp_path / f"{memory}.db")
        store.init_schema()
        star = PersonaNode(
            id=persona_id("practical"), session=PERSONA_SESSION, name="practical", perspective="practical",
            sessions=["earlier"], record={c.value: [6, 6] for c in TensionCategory}, trials=30, successes=30,
        )  # fmt: skip
        store.write([star.to_record()])

        _, state, _ = run_scripted(
            store,
            tmp_path / memory,
            scripted(QUESTIONS[:1]),
            session=f"s-{memory}",
            **{**ROUTED, "agent_memory": memory},
        )
        branch = min(
            (d for d in state.graph.debates.values() if d.origin.value == "branch"), key=lambda d: d.id
        )
        staffs[memory] = branch.staff
        kept = personas(store)["practical"]
        assert kept.sessions == (["earlier", f"s-{memory}"] if memory == "store" else ["earlier"])
        store.close()
    assert staffs["store"] is not None and staffs["store"][0] == "practical"
    assert staffs["session"] == ["analytical", "creative"]
