from __future__ import annotations

from typing import Any

import pytest

from dagmca.graph import NodeKind, Phase
from dagmca.team import build_tree
from tests.support.sessions import RunSession


@pytest.mark.parametrize(
    ("cpp", "depth", "signals", "per_round"),
    [
        (3, 2, True, 8),
        (3, 2, False, 7),
        (2, 3, True, 16),
        (2, 3, False, 13),
        (1, 2, True, 3),
        (4, 1, True, 1),
    ],
)
def test_calls_per_round_match_the_seed_cost_table(
    cpp: int, depth: int, signals: bool, per_round: int
) -> None:
    assert build_tree(cpp, depth, ("a",)).calls_per_round(signals) == per_round


def test_tree_names_roles_and_perspectives() -> None:
    tree = build_tree(2, 3, ("analytical", "creative", "critical"))
    assert sorted(tree.agents) == ["L0N1", "L1N1", "L1N2", "L2N1", "L2N2", "L2N3", "L2N4"]
    assert [a.perspective for a in tree.leaves] == ["analytical", "creative", "critical", "analytical"]
    assert tree.agents["L2N3"].parent == "L1N2"
    assert [s.name for s in tree.siblings("L2N3")] == ["L2N4"]
    assert tree.root.role.value == "integrator" and tree.agents["L1N1"].role.value == "coordinator"


@pytest.mark.parametrize(
    ("cpp", "depth", "signals"), [(3, 2, True), (2, 3, False), (1, 2, True), (2, 1, True)]
)
def test_main_debate_makes_exactly_the_table_calls(
    run_fake: RunSession, cpp: int, depth: int, signals: bool
) -> None:
    _, state, fake = run_fake(
        cpp=cpp,
        depth=depth,
        signals=signals,
        rounds=3,
        strange_loops=1,
        max_depth=0,
        convergence_threshold=1.0,
    )
    debate_calls = [
        c for c in fake.calls if c.meta.debate.endswith("/main") and c.meta.phase in {p.value for p in Phase}
    ]
    expected = 3 * build_tree(cpp, depth, ("a",)).calls_per_round(signals) + 1
    assert len(debate_calls) == expected
    assert len(state.handles.store.nodes("s1", NodeKind.ROUND)) == 3


def test_phase_calls_run_concurrently(run_fake: RunSession) -> None:
    _, _, fake = run_fake(
        cpp=3, depth=2, rounds=1, max_depth=0, delay=0.02, concurrency=8, observers=("skeptical",)
    )
    assert fake.max_in_flight >= 3  # the three leaves respond at once


@pytest.mark.slow
def test_concurrency_limit_holds_for_every_call(run_fake: RunSession) -> None:
    _, _, fake = run_fake(cpp=3, depth=2, rounds=2, max_depth=1, delay=0.005, concurrency=2)
    assert fake.max_in_flight == 2


def test_lateral_sees_siblings_only_and_convergence_stops_early(run_fake: RunSession) -> None:
    def same_answer(call: Any) -> Any:
        if call.schema is not None:
            return {"category": "gap", "urgency": 0.0, "question": "", "excerpt": "", "rationale": ""}
        return "The same answer every time."

    _, state, fake = run_fake(same_answer, cpp=2, depth=3, rounds=4, max_depth=0)
    lateral = [c for c in fake.calls if c.meta.phase == "lateral" and c.meta.agent == "L2N1"]
    assert lateral and "L2N2" in lateral[0].prompt and "L2N3" not in lateral[0].prompt
    main = state.graph.debates["s1/main"]
    assert main.converged and main.rounds == 2


def test_prompts_stay_bounded_as_rounds_accumulate(run_fake: RunSession) -> None:
    counter = iter(range(10**6))

    def long_answers(call: Any) -> Any:
        if call.schema is not None:
            return {"category": "gap", "urgency": 0.0, "question": "", "excerpt": "", "rationale": ""}
        # a different long answer every call, so nothing converges and context could pile up
        n = next(counter)
        return f"{call.meta.agent} answer{n} " + " ".join(f"w{n}x{i}" for i in range(120))

    _, _, fake = run_fake(long_answers, cpp=2, depth=3, rounds=5, max_depth=0, convergence_threshold=1.0)
    by_role: dict[tuple[str, str], list[int]] = {}
    for call in fake.calls:
        if call.meta.phase in ("respond", "lateral", "observe", "signal"):
            by_role.setdefault((call.meta.agent, call.meta.phase), []).append(len(call.prompt))
    assert by_role and all(len(sizes) == 5 for sizes in by_role.values()), "five rounds of every role"
    for (agent, phase), sizes in by_role.items():
        # Round 2 adds the agent's own previous turn, its parent's signal and (a leaf's
        # respond) its parent's synthesis; after that nothing accumulates: every quoted
        # text is clipped to a fixed length.
        assert sizes[4] <= 4 * sizes[0], f"{agent} {phase}: round 5 prompt {sizes[4]} vs round 1 {sizes[0]}"
        assert max(sizes[1:]) <= 1.1 * min(sizes[1:]), f"{agent} {phase} grows: {sizes}"


@pytest.mark.slow
def test_a_phase_of_n_calls_takes_about_one_calls_time(run_fake: RunSession) -> None:
    """Four leaves respond at once: the phase spans about one call's delay, not four."""
    import time

    from dagmca.llm.fake import ScriptedCall, default_responder

    started: dict[str, float] = {}
    ended: dict[str, float] = {}

    def delay(call: ScriptedCall) -> float:
        started[call.meta.agent + call.meta.phase] = time.monotonic()
        return 0.25

    def responder(call: ScriptedCall) -> Any:
        ended[call.meta.agent + call.meta.phase] = time.monotonic()
        return default_responder(call)

    run_fake(
        responder, cpp=4, depth=2, rounds=1, strange_loops=0, max_depth=0, monitor_every="off",
        delay=delay, concurrency=4,
    )  # fmt: skip
    leaves = [f"L1N{n}respond" for n in range(1, 5)]
    span = max(ended[k] for k in leaves) - min(started[k] for k in leaves)
    assert 0.25 <= span < 0.5, f"4 concurrent calls of 0.25 s took {span:.2f} s"
