"""The affinity router and its alternatives, and agents as accumulating contexts."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from dagmca.debate.contexts import AgentContexts
from dagmca.debate.events import Credited, Event
from dagmca.debate.router import Router
from dagmca.graph import EdgeType, NodeKind
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from tests.support.sessions import RunSession

POOL = ("analytical", "creative", "critical", "practical", "theoretical", "empirical", "ethical", "systemic")


def test_affinity_concentrates_a_category_on_the_agent_with_the_best_history() -> None:
    router = Router("affinity", POOL, seed=7, temperature=0.1)
    for agent in POOL:
        for k in range(10):
            router.update("gap", agent, success=agent == "ethical" and k < 9)
    picks = Counter(router.choose("gap", 1, key=f"b{i}")[0] for i in range(50))
    assert picks["ethical"] >= 45, picks
    # another category has no history: no concentration there
    other = Counter(router.choose("meta", 1, key=f"b{i}")[0] for i in range(80))
    assert other["ethical"] < 40 and len(other) >= 5, other
    # the same seed and key draw the same staff
    assert Router("affinity", POOL, seed=7).choose("meta", 3, "x") == Router("affinity", POOL, seed=7).choose(
        "meta", 3, "x"
    )


def test_ucb_tries_every_agent_first() -> None:
    router = Router("ucb", POOL)
    first = []
    for i in range(len(POOL)):
        (agent,) = router.choose("assumption", 1, key=str(i))
        first.append(agent)
        router.update("assumption", agent, success=agent == "critical")
    assert first == list(POOL)
    # then the one that succeeded leads
    assert router.choose("assumption", 1, key="next") == ["critical"]


def test_round_robin_cycles_and_greedy_takes_the_best() -> None:
    rr = Router("round-robin", POOL)
    assert [rr.choose("gap", 3, key=str(i)) for i in range(3)] == [
        ["analytical", "creative", "critical"],
        ["practical", "theoretical", "empirical"],
        ["ethical", "systemic", "analytical"],
    ]
    greedy = Router("greedy", POOL)
    greedy.update("gap", "systemic", True)
    greedy.update("gap", "creative", True)
    greedy.update("gap", "creative", True)
    assert greedy.choose("gap", 2, key="x") == ["creative", "systemic"]
    r = Router("random", POOL, seed=3)
    assert r.choose("gap", 3, key="b1") == Router("random", POOL, seed=3).choose("gap", 3, key="b1")
    assert len(set(r.choose("gap", 3, key="b2"))) == 3


def test_contexts_keep_only_surviving_contributions_first_in_first_out() -> None:
    ctx = AgentContexts(size=2)
    e = HashingEmbedder()
    resolution = "road pricing funds buses and protects workers"
    said = {"a": "road pricing funds buses", "b": "sonnets turn on grief", "c": "pricing protects workers"}
    survived = asyncio.run(ctx.credit(said, resolution, e, threshold=0.3))
    assert survived == {"a": True, "b": False, "c": True}
    assert ctx.kept("a") == ["road pricing funds buses"] and ctx.kept("b") == []
    for text in ("road pricing one", "road pricing two"):
        asyncio.run(ctx.credit({"a": text, "b": "x y z"}, "road pricing", e, threshold=0.1))
    assert ctx.kept("a") == ["road pricing one", "road pricing two"]  # bounded: the oldest went


def test_a_routed_session_staffs_branches_and_agents_carry_their_contexts(
    run_fake: RunSession, tmp_path: Path
) -> None:
    credited: list[Credited] = []

    class Record:
        def emit(self, event: Event) -> None:
            if isinstance(event, Credited):
                credited.append(event)

    _, state, fake = run_fake(
        router="round-robin", cpp=3, depth=2, rounds=1, max_depth=1, max_branches=3, agent_context_size=2,
        success_threshold=0.0, monitor_every="turn", events=Record(),
    )  # fmt: skip
    branches = sorted(
        (d for d in state.graph.debates.values() if d.origin.value == "branch"), key=lambda d: d.id
    )
    assert [d.staff for d in branches][:2] == [
        ["analytical", "creative", "critical"],
        ["practical", "theoretical", "empirical"],
    ]
    # a seat holding another perspective than its default is its own Agent node
    agents = {n.id.rsplit("/", 1)[-1]: n for n in state.handles.store.nodes("s1", NodeKind.AGENT)}
    assert "L1N1.practical" in agents and agents["L1N1.practical"].props["perspective"] == "practical"
    turns = {n.id: n for n in state.handles.store.nodes("s1", NodeKind.TURN)}
    for e in state.handles.store.edges("s1", EdgeType.BY):
        assert (
            turns[e.source].props["perspective"] == agents[e.target.rsplit("/", 1)[-1]].props["perspective"]
        )
    # what survived the main debate shapes the branch prompts of that perspective, and only that
    survived = next(set(c.survived) for c in credited if c.debate == "s1/main")
    assert survived, "with a threshold of 0, the best half of the team survives"
    b1 = [c for c in fake.calls if c.meta.debate == branches[0].id and c.meta.phase == "respond"]
    staff = branches[0].staff or []
    assert len(b1) == 3
    for c in b1:
        seat = staff[int(c.meta.agent.removeprefix("L1N")) - 1]
        assert ("An earlier contribution of yours that the group kept" in c.prompt) == (seat in survived)
    main = [c for c in fake.calls if c.meta.debate == "s1/main" and c.meta.phase == "respond"]
    assert not any("Your earlier contributions" in c.prompt for c in main)
    assert check_store(state.handles.store, "s1") == []
