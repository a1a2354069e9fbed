"""Observers with memory and a scale: they see the tensions their debate has flagged
and are asked for a new angle; urgency is anchored at several levels; a flag whose
excerpt is not in its turn is dropped and counted."""

from __future__ import annotations

from typing import Any

from dagmca.debate.events import Event, TensionDropped
from dagmca.llm.fake import ScriptedCall
from dagmca.prompts import templates as tpl
from dagmca.text import quotes
from tests.support.sessions import RunSession, excerpt_of, flag, no_flag

FIRST = "Who pays for the buses once the charge revenue falls?"
INVENTED = "Would the suburbs secede from the city over the charge?"
MARK = "Tensions already flagged in this debate:"


class Dropped:
    def __init__(self) -> None:
        self.events: list[TensionDropped] = []

    def emit(self, event: Event) -> None:
        if isinstance(event, TensionDropped):
            self.events.append(event)


def test_a_later_observer_prompt_lists_the_earlier_tension_and_an_invented_excerpt_makes_none(
    run_fake: RunSession,
) -> None:
    """Must show: the first check flags FIRST, quoting its turn, and INVENTED, quoting
    nothing the turn says; later checks of the debate are shown FIRST (not INVENTED, which
    is no tension), and INVENTED is dropped, counted, with its reason."""
    flags = [(FIRST, True), (INVENTED, False)]
    prompts: list[str] = []

    def respond(call: ScriptedCall) -> Any:
        if call.schema is None:
            return f"{call.meta.agent} says the charge funds buses in round {len(call.prompt) % 7}."
        if call.meta.phase != "monitor":
            return None
        prompts.append(call.prompt)
        if not flags:
            return no_flag()
        question, quoted = flags.pop(0)
        return flag(question, excerpt=excerpt_of(call) if quoted else "the suburbs will secede tomorrow")

    dropped = Dropped()
    _, state, _ = run_fake(
        respond, events=dropped, rounds=2, max_depth=0, observers=("skeptical",), monitor_every="turn"
    )
    questions = [t.question for t in state.graph.tensions.values()]
    assert questions == [FIRST]
    assert [e.question for e in dropped.events] == [INVENTED]
    assert "excerpt is not in the turn" in dropped.events[0].reason
    assert state.counts.dropped_tensions == 1
    later = [p for p in prompts if MARK in p]
    assert later, "later checks are shown the debate's tensions"
    assert all(f"{MARK}\n- {FIRST}" in p and INVENTED not in p for p in later)
    assert MARK not in prompts[0]


def test_the_observer_prompt_anchors_urgency_and_keeps_the_meta_lens_on_the_subject() -> None:
    for level in ("0 to 0.2", "0.3 to 0.5", "0.6 to 0.8", "0.9 to 1"):
        assert level in tpl.FLAG_FIELDS
    meta = tpl.OBSERVER_LENSES["meta"]
    assert "passage's subject" in meta and "look at the debate itself" not in meta
    assert "new angle" in tpl.MONITOR_TASK and "new angle" in tpl.MONITOR_SIBLINGS_TASK


def test_an_excerpt_is_found_whatever_its_case_spacing_punctuation_or_ellipsis() -> None:
    turn = "The council, it says, should PRICE road space;\nthe revenue then funds buses."
    assert quotes("should price road space", turn)
    assert quotes('"the council, it says …  funds buses"', turn)
    assert quotes("council... revenue... buses", turn)
    assert not quotes("price the road", turn)
    assert not quotes("buses ... council", turn)  # pieces in the turn's order
    assert not quotes("", turn)


def test_the_bundled_models_unquoted_excerpt_is_located_and_marked_for_it_alone(
    run_fake: RunSession,
) -> None:
    """The bundled model's concession (--unquoted-excerpts locate): its flag whose excerpt
    the turn does not contain stands, with the turn's sentence nearest the flag as its
    excerpt, marked; the default, every other model's, drops it (the test above)."""
    flags = [(INVENTED, False)]

    def respond(call: ScriptedCall) -> Any:
        if call.schema is None:
            return f"{call.meta.agent} says the fare funds buses. The suburbs may object to it."
        if call.meta.phase != "monitor" or not flags:
            return no_flag() if call.meta.phase == "monitor" else None
        question, _ = flags.pop(0)
        return flag(question, excerpt="the suburbs will secede tomorrow")

    dropped = Dropped()
    _, state, _ = run_fake(
        respond,
        events=dropped,
        rounds=1,
        max_depth=0,
        observers=("skeptical",),
        monitor_every="turn",
        unquoted_excerpts="locate",
    )
    [tension] = state.graph.tensions.values()
    assert tension.question == INVENTED and tension.excerpt_located
    assert tension.excerpt == "The suburbs may object to it."
    assert not dropped.events


def test_only_the_bundled_model_locates_unquoted_excerpts() -> None:
    from dagmca.config import SessionConfig

    assert SessionConfig(llm="local").unquoted_excerpts == "locate"
    assert SessionConfig(llm="local", local_model="/models/qwen2.5-7b.gguf").unquoted_excerpts == "drop"
    assert SessionConfig(llm="openai", model="gpt-4o-mini").unquoted_excerpts == "drop"
    assert SessionConfig(llm="fake").unquoted_excerpts == "drop"
