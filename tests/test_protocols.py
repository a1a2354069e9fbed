"""The decompose baseline, the second-seed options of the MCA engine, and the reports
that describe a debate (validated against their pydantic models)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import EdgeType, NodeKind, Phase
from dagmca.llm.fake import ScriptedCall, default_responder
from dagmca.prompts.schemas import Reflection, Subtasks
from dagmca.reports.models import FinalState, MCAReport
from dagmca.store.check import check_store
from dagmca.team import build_tree
from tests.support.sessions import RunSession

ENGINE_PHASES = {p.value for p in Phase}
QUIET: dict[str, Any] = {"max_depth": 0, "monitor_every": "off", "convergence_threshold": 1.0}


def engine_calls(fake: Any) -> list[ScriptedCall]:
    return [c for c in fake.calls if c.meta.debate.endswith("/main") and c.meta.phase in ENGINE_PHASES]


def report_of(state: Any, tmp_path: Path, session: str = "s1") -> MCAReport:
    path = tmp_path / "out" / session / "mca_report.json"
    return MCAReport.model_validate_json(path.read_text(encoding="utf-8"))


# -- the top-down baseline ------------------------------------------------------------------
@pytest.mark.parametrize(("cpp", "depth", "legacy"), [(3, 2, 5), (2, 3, 8), (1, 2, 3), (3, 1, 1)])
@pytest.mark.parametrize("loops", [0, 2])
def test_decompose_makes_the_seed_legacy_call_count(
    run_fake: RunSession, tmp_path: Path, cpp: int, depth: int, legacy: int, loops: int
) -> None:
    _, state, fake = run_fake(protocol="decompose", cpp=cpp, depth=depth, strange_loops=loops, **QUIET)
    assert build_tree(cpp, depth, ("a",)).legacy_calls() == legacy
    assert len(engine_calls(fake)) == legacy + loops
    report = report_of(state, tmp_path)
    assert report.protocol == "decompose" and report.summary_metrics.total_llm_calls == legacy + loops
    assert len(report.rounds) == 1 and len(report.strange_loops) == loops
    assert check_store(state.handles.store, "s1") == []


def test_decompose_hands_each_child_its_own_subtask_and_pads_a_short_list(
    run_fake: RunSession, tmp_path: Path
) -> None:
    def responder(call: ScriptedCall) -> Any:
        if call.schema is Subtasks:  # one subtask short, whoever asks
            return {"subtasks": [f"{call.meta.agent} part {k}" for k in range(1, 2)]}
        return default_responder(call)

    _, state, fake = run_fake(responder, protocol="decompose", cpp=2, depth=3, strange_loops=0, **QUIET)
    by_agent = {c.meta.agent: c for c in engine_calls(fake) if c.meta.phase == "respond"}
    assert "L1N1 part 1" in by_agent["L2N1"].prompt  # from its parent's decomposition
    assert "(part 2 of 2)" in by_agent["L2N2"].prompt  # padded: the parent's own task
    assert "L1N2 part 1" in by_agent["L2N3"].prompt
    root = [c for c in engine_calls(fake) if c.meta.phase == "synthesize"]
    assert len(root) == 1 and all(f"L2N{n}" in root[0].prompt for n in range(1, 5))
    report = report_of(state, tmp_path)
    assert report.rounds[0].agents["L2N1"].subtask == "L1N1 part 1"
    assert report.rounds[0].agents["L0N1"].subtasks == [
        "L0N1 part 1",
        f"{state.graph.debates['s1/main'].question} (part 2 of 2)",
    ]
    # the synthesis OBSERVES every answer it read
    edges = state.handles.store.edges("s1")
    synth = next(
        n for n in state.handles.store.nodes("s1", NodeKind.TURN) if n.props["phase"] == "synthesize"
    )
    assert len([e for e in edges if e.source == synth.id and e.type is EdgeType.OBSERVES]) == 4


# -- second-seed options ------------------------------------------------------------------
@pytest.mark.parametrize(("cpp", "depth"), [(3, 2), (2, 3), (2, 1)])
def test_broadcast_and_self_reflection_cost_exactly_their_calls(
    run_fake: RunSession, tmp_path: Path, cpp: int, depth: int
) -> None:
    """No critical signal (the default fake says `none`): one broadcast, one reflection
    per agent per round, nothing else."""
    _, state, fake = run_fake(
        cpp=cpp, depth=depth, rounds=2, strange_loops=1, broadcast=True, self_reflect=True, **QUIET
    )
    tree = build_tree(cpp, depth, ("a",))
    per_round = tree.calls_per_round(True) + len(tree.agents)
    assert tree.calls_per_round(True, reflect=True) == per_round
    assert len(engine_calls(fake)) == 1 + 2 * per_round + 1
    report = report_of(state, tmp_path)
    assert report.goal and report.signal_chain == []
    assert sorted(report.satisfaction_map) == [1, 2]
    assert sorted(report.satisfaction_map[1]) == sorted(tree.agents)
    assert all(0.0 <= v <= 1.0 for r in report.satisfaction_map.values() for v in r.values())
    # every agent's prompt carries the goal the root broadcast
    respond = [c for c in engine_calls(fake) if c.meta.phase == "respond"]
    assert respond and all(report.goal[:40] in c.prompt for c in respond)


def test_a_critical_signal_makes_the_parent_rebroadcast_within_max_iterations(
    run_fake: RunSession, tmp_path: Path
) -> None:
    """Every leaf signals needs_reframing each round; --max-iterations 1 lets only the
    first parent (tree order) re-broadcast, once, to its own subtree."""

    def responder(call: ScriptedCall) -> Any:
        if call.schema is Reflection:
            leaf = call.meta.agent.startswith("L2")
            return {
                "satisfaction": 0.2 if leaf else 0.9,
                "signal": "needs_reframing" if leaf else "unexpected_finding",
                "note": f"{call.meta.agent} is unsure",
            }
        if call.meta.phase == "broadcast":
            return f"NEW GOAL from {call.meta.agent}"
        return default_responder(call)

    _, state, fake = run_fake(
        responder, cpp=2, depth=3, rounds=2, strange_loops=0, self_reflect=True, max_iterations=1, **QUIET
    )
    calls = engine_calls(fake)
    rebroadcasts = [c for c in calls if c.meta.phase == "broadcast"]
    assert [c.meta.agent for c in rebroadcasts] == ["L1N1"]
    assert "L2N1 (needs_reframing)" in rebroadcasts[0].prompt and "L2N3" not in rebroadcasts[0].prompt
    assert len(calls) == 2 * (16 + 7) + 1
    round2 = {c.meta.agent: c.prompt for c in calls if c.meta.phase == "respond" and "previous" in c.prompt}
    assert "NEW GOAL from L1N1" in round2["L2N1"] and "NEW GOAL" not in round2["L2N3"]

    report = report_of(state, tmp_path)
    chain = report.signal_chain
    # per round: 4 leaves (critical, up to their parent), 2 coordinators and the root
    assert len(chain) == 2 * 7
    first = next(h for h in chain if h.sender == "L2N1")
    assert (first.round, first.sender, first.receiver, first.kind, first.critical) == (
        1, "L2N1", "L1N1", "needs_reframing", True,
    )  # fmt: skip
    assert first.rebroadcast == "s1/main/r1/L1N1/rebroadcast"
    assert [h.rebroadcast is not None for h in chain if h.round == 1 and h.critical] == [
        True,
        True,
        False,
        False,
    ]
    assert all(h.rebroadcast is None for h in chain if h.round == 2)
    root_hop = next(h for h in chain if h.sender == "L0N1")
    assert root_hop.receiver is None and not root_hop.critical
    assert report.satisfaction_map[2]["L2N4"] == 0.2
    # the re-broadcast turn OBSERVES the reflections that caused it, and REVISES nothing before it
    edges = state.handles.store.edges("s1")
    observed = {e.target for e in edges if e.source == first.rebroadcast and e.type is EdgeType.OBSERVES}
    assert observed == {"s1/main/r1/L2N1/reflect", "s1/main/r1/L2N2/reflect"}
    assert check_store(state.handles.store, "s1") == []


# -- reports ------------------------------------------------------------------------------
@pytest.mark.slow
def test_reports_validate_and_carry_the_seed_fields(run_fake: RunSession, tmp_path: Path) -> None:
    _, state, _ = run_fake(cpp=2, depth=3, rounds=2, max_depth=1, max_branches=2, convergence_threshold=1.0)
    out = tmp_path / "out" / "s1"
    main = report_of(state, tmp_path)
    assert [r.round for r in main.rounds] == [1, 2]
    assert main.convergence.rounds_used == 2 and len(main.convergence.score_trajectory) == 1
    assert main.rounds[1].convergence_score == main.convergence.score_trajectory[0]
    leaf = main.rounds[0].agents["L2N1"]
    assert leaf.role.value == "specialist" and leaf.response and leaf.lateral_response
    # the nudge L1N1 sent in round 1 is what its children received
    assert leaf.signal_received == main.rounds[0].agents["L1N1"].signal_sent is not None
    assert main.summary_metrics.total_llm_calls == 2 * 16 + 1
    assert len(main.summary_metrics.mean_sibling_similarity) == 2
    assert main.config.cpp == 2 and main.final_response
    final = FinalState.model_validate_json((out / "final_state.json").read_text(encoding="utf-8"))
    assert final.final and len(final.debates) == len(state.graph.debates) >= 3
    for d in final.debates:
        assert d.report is not None
        branch_report = MCAReport.model_validate_json((out / d.report).read_text(encoding="utf-8"))
        assert branch_report.debate == d.id and branch_report.task == d.question


def test_a_report_that_breaks_the_contract_is_rejected(run_fake: RunSession, tmp_path: Path) -> None:
    run_fake(cpp=2, depth=2, rounds=1, **QUIET)
    data = json.loads((tmp_path / "out" / "s1" / "mca_report.json").read_text())
    MCAReport.model_validate(data)
    for broken in (
        {**data, "surprise": 1},
        {**data, "protocol": "anarchy"},
        {**data, "summary_metrics": {**data["summary_metrics"], "lateral_revision_rate": 1.5}},
        {**data, "config": {**data["config"], "cpp": 0}},
    ):
        with pytest.raises(ValueError):
            MCAReport.model_validate(broken)
