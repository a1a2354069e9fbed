"""Observer calls on groups of sibling turns (--observer-calls siblings, the default):
one call per group of a phase's turns by one parent's children, every lens, at most one
flag per lens per turn, each flag on the turn it names."""

from __future__ import annotations

from typing import Any

from dagmca.debate.estimate import observer_calls
from dagmca.graph import EdgeType
from dagmca.llm.fake import ScriptedCall, checked_excerpt
from dagmca.prompts.schemas import joint_lenses, joint_turns
from tests.support.sessions import RunSession


def flag(lens: str, turn: int, question: str, prompt: str) -> dict[str, Any]:
    return {
        "lens": lens,
        "turn": turn,
        "category": "gap",
        "urgency": 0.8,
        "question": question,
        "excerpt": checked_excerpt(prompt, turn),
        "rationale": "The turn assumes what it should show.",
    }


TOPICS = [
    ("tram maintenance crews", "ridership growth downtown"),
    ("school lunch subsidies", "falling truancy rates"),
    ("harbour dredging works", "container traffic forecasts"),
    ("library opening hours", "adult literacy gains"),
    ("flood barrier upkeep", "insurance premium shifts"),
]


class Observers:
    """Flags the second turn of every group of three through the first lens (twice: the
    second is dropped), and the third through the last lens; nothing else."""

    answers_joint = True

    def __init__(self) -> None:
        self.groups: list[tuple[int, str]] = []  # (turns in the call, the call's prompt)

    def __call__(self, call: ScriptedCall) -> Any:
        if call.schema is None:
            return f"{call.meta.agent} says something about the passage in round {len(self.groups)}."
        if "flags" not in call.schema.model_fields:
            return None
        lenses, turns = joint_lenses(call.schema), joint_turns(call.schema)
        self.groups.append((turns, call.prompt))
        if turns != 3:
            return {"flags": []}
        topic = TOPICS[sum(n == 3 for n, _ in self.groups) - 1]
        return {
            "flags": [
                flag(lenses[-1], 3, f"Which budget pays for {topic[0]}?", call.prompt),
                flag(lenses[0], 2, f"Who measured {topic[1]}, and how?", call.prompt),
                flag(lenses[0], 2, f"Why would anyone believe {topic[1]}?", call.prompt),
            ]
        }


def test_a_phase_of_siblings_is_checked_in_one_call_each_flag_on_its_turn(run_fake: RunSession) -> None:
    observers = Observers()
    result, state, fake = run_fake(observers, rounds=2, max_depth=0, monitor_every="turn")
    cfg = state.handles.config
    assert cfg.observer_calls == "siblings"
    checks = [c for c in fake.calls if c.meta.phase == "monitor"]
    # 3 specialists under the root: respond, lateral, root observe, signal per round,
    # then the strange loop alone; the estimate's formula gives the same
    assert [n for n, _ in observers.groups] == [3, 3, 1, 1] * 2 + [1]
    turns = [c for c in fake.calls if c.meta.phase not in ("monitor", "final", "ledger", "judge")]
    assert len(checks) == 9 == observer_calls(cfg, len(turns), 2) < len(turns)
    # each call quotes its group's turns, numbered, with the transcript before them
    respond = observers.groups[0][1]
    assert all(f"Turn to check {i} (L1N{i}, " in respond for i in (1, 2, 3))
    assert "Turn to check 4" not in respond
    # 4 groups of three, two flags kept from each, on the turn each named
    flagged = {e.source: e for e in state.handles.store.edges("s1", EdgeType.FLAGGED_AT)}
    assert len(state.graph.tensions) == 8 == len(flagged)
    lenses = cfg.observers
    for tension in state.graph.tensions.values():
        edge = flagged[tension.id]
        if "measured" in tension.question or "believe" in tension.question:
            assert tension.observer == lenses[0] and "Who measured" in tension.question
            assert edge.target.endswith(("/L1N2/respond", "/L1N2/lateral")), edge.target
        else:
            assert tension.observer == lenses[-1]
            assert edge.target.endswith(("/L1N3/respond", "/L1N3/lateral")), edge.target
    # the lens's second flag on one turn: dropped and counted, as per-lens could not make it
    assert result.session.dropped_tensions == 4


def test_a_group_larger_than_a_check_is_split(run_fake: RunSession) -> None:
    observers = Observers()
    _, state, fake = run_fake(observers, cpp=6, rounds=1, max_depth=0, monitor_every="turn")
    sizes = [n for n, _ in observers.groups]
    assert sizes[:4] == [4, 2, 4, 2]  # six specialists respond, then lateral
    turns = [c for c in fake.calls if c.meta.phase not in ("monitor", "final", "ledger", "judge")]
    assert len(observers.groups) == observer_calls(state.handles.config, len(turns), 1)
