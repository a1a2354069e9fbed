"""The degeneration guard in a session, on the scripted fake: a loop is asked again with
varied sampling; one that still loops is kept, marked, and left out of what observers,
the merger and the integrator read; an echoing tension question is dropped; all counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedCall
from dagmca.store.check import check_store
from tests.support.sessions import RunSession, excerpt_of, flag, no_flag

LOOP = "The answer is: " * 30
SOUND = "Pricing shifts trips to off-peak hours, and the revenue decides who gains."


def events(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "out" / "s1" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def test_a_loop_is_asked_again_and_the_sound_reply_kept(run_fake: RunSession, tmp_path: Path) -> None:
    def respond(call: ScriptedCall) -> Any:
        if call.schema is not None:
            return no_flag()
        if call.meta.agent == "L1N1" and not call.meta.reask:
            return LOOP
        return f"{SOUND} ({call.meta.agent}, {call.meta.phase}, {len(call.prompt) % 89})"

    result, state, fake = run_fake(respond, rounds=1, max_branches=0)
    reasks = [c for c in fake.calls if c.meta.reask]
    assert reasks and all(c.meta.agent == "L1N1" for c in reasks)
    turns = state.handles.store.nodes("s1", NodeKind.TURN)
    assert not any("The answer is" in str(t.props["text"]) for t in turns)
    assert not any(t.props.get("degenerate") for t in turns)
    assert result.session.reasks == len(reasks)
    assert [e["mended"] for e in events(tmp_path, "reasked")] == [True] * len(reasks)


def test_a_loop_that_persists_is_marked_and_left_out(run_fake: RunSession, tmp_path: Path) -> None:
    observed: list[str] = []

    def respond(call: ScriptedCall) -> Any:
        if call.schema is not None:
            observed.append(call.prompt)
            return no_flag()
        if call.meta.agent == "L0N1":  # the root: the main debate's resolution loops
            return LOOP
        return f"{SOUND} ({call.meta.agent}, {call.meta.phase}, {len(call.prompt) % 89})"

    result, state, fake = run_fake(respond, rounds=1, max_branches=0, monitor_every="turn")
    root_turns = [t for t in state.handles.store.nodes("s1", NodeKind.TURN) if t.props["agent"] == "L0N1"]
    assert root_turns and all(t.props["degenerate"] for t in root_turns)
    main = state.graph.debates["s1/main"]
    assert main.degenerate
    # no observer read the loop, and the integrator did not get it as the resolution
    assert not any("The answer is: The answer is" in p for p in observed)
    final_call = next(c for c in fake.calls if c.meta.phase == "final")
    assert "The answer is: The answer is" not in final_call.prompt
    assert result.session.reasks == len(root_turns)
    assert [e["mended"] for e in events(tmp_path, "reasked")] == [False] * len(root_turns)
    assert check_store(state.handles.store, "s1") == []


def test_an_echoing_tension_question_is_dropped(run_fake: RunSession, tmp_path: Path) -> None:
    questions = iter(
        ["What is the tension in the turns above?", "Is a flat charge fair to low wage workers?"]
    )

    def respond(call: ScriptedCall) -> Any:
        if call.schema is not None:
            if call.meta.phase == "monitor":
                return flag(next(questions, ""), excerpt=excerpt_of(call))
            return None  # judges: nothing to judge here
        return f"{SOUND} ({call.meta.agent}, {call.meta.phase}, {len(call.prompt) % 89})"

    result, state, _ = run_fake(respond, rounds=1, max_branches=0, observers=("skeptical",))
    kept = [t.question for t in state.graph.tensions.values()]
    assert kept == ["Is a flat charge fair to low wage workers?"]
    assert result.session.dropped_tensions == 1
    dropped = events(tmp_path, "tension_dropped")
    assert [d["question"] for d in dropped] == ["What is the tension in the turns above?"]
    assert "prompt" in dropped[0]["reason"]
