"""The final integrator's prompt: labelled sections, only those that exist; each
unreconciled contradiction with both positions; inline citations checked."""

from __future__ import annotations

import re

from dagmca.cli.render import citations_row
from dagmca.evaluation.arms import BARE
from dagmca.graph import EdgeType
from dagmca.llm.fake import ScriptedCall
from dagmca.llm.tokens import TokenCounter
from dagmca.metrics.session import session_metrics
from dagmca.prompts import final as fp
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import PromptBudget
from dagmca.similarity import HashingEmbedder
from tests.support.sessions import QUESTIONS, RunSession, scripted

POSITION_A = "Pricing works when revenue funds buses, and position marker alpha-one holds."
POSITION_B = "Pricing works when revenue funds buses, and position marker beta-two holds."


def final_prompt(calls: list[ScriptedCall]) -> str:
    (call,) = [c for c in calls if c.meta.phase == "final" and c.meta.agent == "root-integrator"]
    return call.prompt


def test_an_eval_arm_without_branches_gets_a_final_prompt_that_names_no_branch(run_fake: RunSession) -> None:
    """Must show: the bare arms of an eval (no observers, no branches) are told what they
    have, the main debate's resolution, and nothing about branches or syntheses."""
    _, _, fake = run_fake(None, rounds=1, **BARE)
    prompt = final_prompt(fake.calls)
    task = prompt.rsplit("</turn>", 1)[-1]
    assert "[M] Main debate resolution" in prompt
    assert "the main debate's resolution ([M])" in task
    assert not re.search(r"branch|synthesis|syntheses|contradiction", prompt, re.I)
    assert "Cite inline" in task and "Add no claim that no section supports" in task and fp.MARK in task


def test_every_contradiction_reaches_the_final_prompt_with_both_positions(run_fake: RunSession) -> None:
    """Must show: two branches the judge finds contradicting reach the final prompt as
    one [C] section holding both debates' resolutions whole, each under its branch's
    label, not the judge's one-line reason."""
    respond = scripted(
        [QUESTIONS[0], QUESTIONS[1]],
        {QUESTIONS[0]: POSITION_A, QUESTIONS[1]: POSITION_B},
        pair=lambda a, b: "contradict",
    )
    _, state, fake = run_fake(respond, rounds=1, max_branches=2, max_depth=1, max_revisits=0)
    assert len(state.graph.contradictions) == 1
    prompt = final_prompt(fake.calls)
    positions = re.findall(
        r"\[C1\] Unreconciled: [^\n]*; the position of (\[B\d\]).*?:\n<turn>\n(.*?)\n</turn>", prompt, re.S
    )
    assert sorted(label for label, _ in positions) == ["[B1]", "[B2]"]
    texts = " ".join(text for _, text in positions)
    assert "alpha-one" in texts and "beta-two" in texts and "scripted judge" not in texts
    assert "[C2]" not in prompt
    assert "contradictions left unreconciled" in prompt or "a contradiction left unreconciled" in prompt


def test_the_final_text_keeps_only_citations_of_sections_it_was_given(run_fake: RunSession) -> None:
    def respond(call: ScriptedCall) -> str | None:
        if call.meta.phase == "final" and call.meta.agent == "root-integrator":
            return "Pricing works [M]. Buses gain [M, B7]. Inference: shops adapt [Q9]."
        return None if call.schema is not None else f"{call.meta.agent} on the passage."

    _, state, _ = run_fake(respond, rounds=1, **BARE)
    final = state.graph.final
    assert final is not None
    assert final.text == "Pricing works [M]. Buses gain [M]. Inference: shops adapt."
    assert final.citations == ["M"] and final.removed_citations == ["B7", "Q9"]
    edges = [
        e
        for e in state.handles.store.edges(state.handles.session_id, EdgeType.INTEGRATES)
        if e.source == final.id
    ]
    assert [(e.props.get("label"), e.props.get("cited")) for e in edges] == [("M", True)]


def test_a_final_with_two_uncited_claims_reports_uncited_2(run_fake: RunSession) -> None:
    """One claim cites the main debate; one cites nothing; one cites only a label the
    prompt never gave (removed): two claims are uncited, in the graph, `metrics` and the
    run summary's row."""
    written = (
        "Pricing road space works in dense centres [M]. Bus ridership rises when fares fall.\n\n"
        "What remains open:\n- Inference: shops adapt to fewer cars [Q9]."
    )

    def respond(call: ScriptedCall) -> str | None:
        if call.meta.phase == "final" and call.meta.agent == "root-integrator":
            return written
        return None if call.schema is not None else f"{call.meta.agent} on the passage."

    _, state, _ = run_fake(respond, rounds=1, **BARE)
    final = state.graph.final
    assert final is not None and final.removed_citations == ["Q9"]
    assert final.claims == 3
    assert final.uncited == ["Bus ridership rises when fares fall.", "Inference: shops adapt to fewer cars."]
    m = session_metrics(state.handles.store, state.handles.session_id, HashingEmbedder())
    assert m.citations is not None
    assert (m.citations.claims, m.citations.cited, m.citations.uncited, m.citations.removed) == (3, 1, 2, 1)
    assert citations_row(m.citations).startswith("1 of 3 claims cite a section (33%); 2 uncited; 1 citation")
    assert state.metrics is not None and state.metrics.citations == m.citations


def test_the_task_names_the_kinds_present_with_their_labels() -> None:
    sections = [fp.Section("M", "Main", "x"), fp.Section("B1", "b", "y"), fp.Section("B2", "b", "z")]
    assert fp.contents(sections) == (
        "the main debate's resolution ([M]); 2 branch debates' resolutions ([B1], [B2])"
    )
    checked = fp.check_citations("A [B1; S4] and [x] stay.", ["B1"])
    assert checked.text == "A [B1] and [x] stay." and checked.removed == ["S4"]


def test_a_question_sessions_final_prompt_names_only_what_it_has() -> None:
    """An eval's arms answer questions: the asked prompt, like the open one, names no
    branch, synthesis or contradiction when there are none, and every one there is."""
    budget = PromptBudget(TokenCounter(), window=8192, turn=200, flag=200, synthesis=300, final=400)
    frame = tpl.Frame(
        question="Does the toll pay for the buses?", passage=tpl.passage_block("P."), budget=budget
    )
    bare = [fp.Section("M", "Main debate resolution", "It does.")]
    for asked in (True, False):
        task = fp.integrate(frame, bare, asked=asked).messages[-1]["content"].rsplit("</turn>", 1)[-1]
        assert not re.search(r"branch|synthesis|syntheses|contradiction", task, re.I), task
    full = [
        *bare,
        fp.Section("B1", "Branch (depth 1) on: who pays?", "Drivers."),
        fp.Section("S1", "Synthesis of converging branches", "Drivers and councils."),
        fp.contradiction("C1", [("B1", "who pays?", "Drivers."), ("B2", "who gains?", "Nobody.")]),
        fp.Section("Q1", "Open question (urgency 0.50)", "When?"),
    ]
    task = fp.integrate(frame, full, asked=True).messages[-1]["content"].rsplit("</turn>", 1)[-1]
    for named in ("([B1])", "([S1])", "([C1])", "([Q1])", "both of its positions"):
        assert named in task


def test_only_a_sections_label_is_a_citation_not_an_editors_bracket() -> None:
    checked = fp.check_citations("As [T]he passage says, fares rise [B1] and [Z9] no [M].", ["M", "B1"])
    assert checked.text.startswith("As [T]he passage says")
    assert checked.cited == ["B1", "M"] and checked.removed == []
