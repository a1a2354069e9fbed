"""The seed's success criteria for the DAG, all at once, on the stored graph of one
session driven by the scripted fake."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import networkx as nx
import pytest

from dagmca.debate.dag.merging import components
from dagmca.graph import STRUCTURAL_EDGES, DebateOrigin, EdgeType, NodeKind, edge
from dagmca.store.check import check_store
from dagmca.store.networkx_view import load_graph
from tests.support.criteria import CRITERIA_SETTINGS, responder
from tests.support.sessions import QUESTIONS, RunSession


def test_every_success_criterion_holds_on_the_stored_graph(run_fake: RunSession) -> None:
    result, state, _ = run_fake(responder, **CRITERIA_SETTINGS)
    st = state.handles.store
    assert result.session.status == "done" and result.final is not None
    g = load_graph(st, "s1")
    kinds = Counter(d["kind"] for _, d in g.nodes(data=True))
    types = Counter(k for _, _, k in g.edges(data="type"))

    # observers flagged tensions during every debate, several per debate
    per_debate = Counter(d["debate"] for _, d in g.nodes(data=True) if d["kind"] == "Tension")
    debates = [n for n, d in g.nodes(data=True) if d["kind"] == "Debate"]
    assert all(per_debate[d] >= 2 for d in debates), per_debate
    # flags are tied to the turns that raised them
    assert types["FLAGGED_AT"] >= sum(per_debate.values())
    # the selection chose a subset: three branches, the rest kept as stubs
    branches = [d for d in state.graph.debates.values() if d.origin is DebateOrigin.BRANCH]
    assert len(branches) == 3
    stubs = [n for n, d in g.nodes(data=True) if "Stub" in d["labels"]]
    assert stubs and all(g.nodes[s]["status"] == "stub" for s in stubs)
    # branches ran aware of each other: their prompts carried each other's tags; they cite
    # each other, which makes a cycle of reference A -> B -> A
    refs = nx.DiGraph([(u, v) for u, v, k in g.edges(data="type") if k == "REFERENCES"])
    assert ("s1/main/b1", "s1/main/b2") in refs.edges and ("s1/main/b2", "s1/main/b1") in refs.edges
    # merges were found and synthesized: a Synthesis with two parents
    syntheses = [n for n, d in g.nodes(data=True) if d["kind"] == "Synthesis"]
    assert len(syntheses) == 1
    parents = [u for u, _, k in g.in_edges(syntheses[0], data="type") if k == "MERGES_INTO"]
    assert sorted(parents) == ["s1/main/b1", "s1/main/b2"]
    assert g.nodes[syntheses[0]]["method"] == "llm" and g.nodes[syntheses[0]]["reason"]
    # related but not merged: judged (here: contradicts), the verdict on the edge
    contradicts = [d for _, _, d in g.edges(data=True) if d["type"] == "CONTRADICTS"]
    assert contradicts and all(d["verdict"] == "contradict" and d["method"] == "llm" for d in contradicts)
    # stubs were revisited: one superseded by a branch that answered it, one explored
    superseded = [n for n, d in g.nodes(data=True) if d.get("status") == "superseded"]
    assert any(d["question"] == QUESTIONS[3] for n, d in g.nodes(data=True) if n in superseded)
    assert ("s1/main/b3", next(n for n in superseded if g.nodes[n]["question"] == QUESTIONS[3])) in [
        (u, v) for u, v, k in g.edges(data="type") if k == "SUPERSEDES"
    ]
    revisits = [d for d in state.graph.debates.values() if d.origin is DebateOrigin.REVISIT]
    assert len(revisits) == 1 and revisits[0].question == QUESTIONS[4]
    explored = next(v for u, v, k in g.edges(data="type") if k == "EXPLORES" and u == revisits[0].id)
    assert g.nodes[explored]["status"] == "explored"
    checks = json.loads(g.nodes[explored]["revisit_checks"])
    assert (
        checks[-1]["outcome"] == "relevant" and checks[-1]["after"] == syntheses[0] and checks[-1]["reason"]
    )
    # a true DAG: nodes with several structural parents
    structural = nx.DiGraph(
        [(u, v) for u, v, k in g.edges(data="type") if k in {t.value for t in STRUCTURAL_EDGES}]
    )
    assert nx.is_directed_acyclic_graph(structural)
    assert any(structural.in_degree(n) >= 2 for n in structural)
    # the final read the whole graph, contradictions included
    integrated = {v for u, v, k in g.edges(data="type") if k == "INTEGRATES"}
    assert {"s1/main", *syntheses, *(b.id for b in branches)} <= integrated
    assert kinds["Final"] == 1
    assert check_store(st, "s1") == []

    # a deliberately added structural cycle makes `check` fail
    state.write([], [edge("s1/main", "s1/main/b1", EdgeType.BRANCHES_FROM, "s1")])
    assert any("cycle" in p for p in check_store(st, "s1"))
    assert NodeKind.SYNTHESIS.value in kinds


@pytest.mark.slow
def test_max_nodes_caps_the_session(run_fake: RunSession) -> None:
    settings = dict(
        max_branches=3, max_depth=2, max_revisits=1, rounds=2, strategy="urgent", monitor_every="turn"
    )
    _, free, _ = run_fake(responder, session="free", **settings)
    uncapped = len(free.graph.node_ids)
    cap = uncapped // 3
    _, capped, _ = run_fake(responder, session="capped", max_nodes=cap, **settings)
    assert len(capped.graph.debates) < len(free.graph.debates)
    assert len(capped.graph.node_ids) <= cap * 1.15, (len(capped.graph.node_ids), cap)
    assert check_store(capped.handles.store, "capped") == []


@pytest.mark.slow
def test_sibling_branches_run_in_parallel(run_fake: RunSession) -> None:
    """The main debate's branches debate at once: each one's first call is asked before
    any one's last (one after another, the second would begin after the first ended).
    Told by the order of the calls, not by a time a busy machine could stretch."""
    settings = dict(max_depth=1, max_revisits=0, rounds=1, delay=0.05, concurrency=64, strategy="urgent")
    _, _, fake = run_fake(session="three", max_branches=3, **settings)
    asked: dict[str, list[int]] = {}
    for i, call in enumerate(fake.calls):
        # a judge's call names the debate it judges for, after that debate's own calls
        if re.fullmatch(r"three/main/b\d", call.meta.debate) and call.meta.phase not in ("judge", "merge"):
            asked.setdefault(call.meta.debate, []).append(i)
    assert len(asked) == 3 and all(len(calls) > 3 for calls in asked.values()), "3 branches, phases each"
    assert max(calls[0] for calls in asked.values()) < min(calls[-1] for calls in asked.values())


def test_converging_pairs_group_as_the_graph_s_connected_components() -> None:
    """The merger groups the pairs judged to converge by connected components: the same
    groups networkx finds, each in index order, ordered by first index, singletons left
    out; chains and cycles included."""
    rng = random.Random(3)
    assert components(5, [(0, 1), (1, 2), (3, 4)]) == [[0, 1, 2], [3, 4]]
    assert components(4, [(3, 0), (2, 3)]) == [[0, 2, 3]]
    assert components(3, []) == []
    for _ in range(300):
        n = rng.randint(1, 12)
        pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, n))]
        pairs = [(a, b) for a, b in pairs if a != b]
        g: nx.Graph = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(pairs)
        assert components(n, pairs) == sorted(sorted(c) for c in nx.connected_components(g) if len(c) > 1)
