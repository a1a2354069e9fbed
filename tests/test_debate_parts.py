"""The root's output in parts, the strange loop that sees the children and the flags and
may not drop a disagreement, lateral stance lines, a question session's answers and
their flips, and convergence that fires on prose that did not materially change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import dagmca
from dagmca.cli.render import metrics_tables
from dagmca.graph import CallPhase, DebateNode, NodeKind, NodeRecord, RoundNode, TurnNode, node_from_record
from dagmca.llm.fake import PARTS_ASKED, STANCE_ASKED, ScriptedCall, ScriptedLLM, default_responder
from dagmca.metrics.session import session_metrics
from dagmca.prompts import lines
from dagmca.prompts.agents import AGAINST_CONFORMITY
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_existing
from tests.support.sessions import PASSAGE, RunSession

MARKER = "QUILLWORT-7"
QUIET: dict[str, Any] = {"max_depth": 0, "cpp": 3, "depth": 2, "convergence_threshold": 1.0}


def _root_parts(dissent: str) -> str:
    return (
        "Position: The passage's case holds for office work only.\n\n"
        f"Disagreements:\n- {dissent}\n\n"
        "Agreements:\n- L1N1 and L1N3 agree that hours measure presence.\n\n"
        "Inferences:\n- From L1N1 and L1N3: the cost falls on shift work first."
    )


def test_a_leafs_disagreement_reaches_the_strange_loop_the_resolution_and_the_final(
    run_fake: RunSession,
) -> None:
    """L1N2 holds a view marked MARKER; the root lists it as a disagreement; the strange
    loop, which sees L1N2's own text and the debate's flags, rewrites the answer without
    it; the engine puts it back, and the final integration reads it."""
    dissent = f"L1N1 vs L1N2: L1N2 holds that {MARKER} decides the case; L1N1 denies it."

    def responder(call: ScriptedCall) -> Any:
        agent, phase = call.meta.agent, call.meta.phase
        if call.schema is None and agent == "L1N2" and phase in ("respond", "lateral"):
            return f"From the creative side, {MARKER} decides the case, whatever the others say."
        if call.schema is None and agent == "L0N1" and phase == "observe":
            return _root_parts(dissent)
        if call.schema is None and phase == "strange_loop":
            return _root_parts("L1N1 vs L1N3: whether hours or output should be the measure.")
        return default_responder(call)

    _, state, fake = run_fake(responder, rounds=1, strange_loops=1, **QUIET)
    loop = next(c for c in fake.calls if c.meta.phase == "strange_loop")
    # the loop sees the leaf's own text in its block, not only the root's account of it
    assert "L1N2 (creative)" in loop.prompt and "whatever the others say" in loop.prompt
    # every flag raised on the rounds' turns (not on the loop's own turn, checked after it)
    flagged = [
        t.question
        for t in state.graph.tensions_of.get("s1/main", {}).values()
        if not any("strange_loop" in f for f in t.flags) and t.status.value != "duplicate"
    ]
    assert flagged and all(q in loop.prompt for q in flagged), "the loop sees the debate's flags"
    main = state.graph.debates["s1/main"]
    parts = lines.load_parts(main.resolution_parts)
    assert parts is not None and parts["restored"] == 1
    assert any(MARKER in d for d in parts["disagreements"])
    assert MARKER in main.resolution.split("Agreements:")[0]  # under the disagreements
    final = next(c for c in fake.calls if c.meta.phase == CallPhase.FINAL.value)
    assert MARKER in final.prompt


def test_a_strange_loop_that_answers_unchanged_leaves_the_root_output_as_it_was(
    run_fake: RunSession,
) -> None:
    def responder(call: ScriptedCall) -> Any:
        if call.schema is None and call.meta.agent == "L0N1" and call.meta.phase == "observe":
            return _root_parts("L1N1 vs L1N2: whether the pilot generalises.")
        if call.schema is None and call.meta.phase == "strange_loop":
            return "Unchanged: the position already rests on the pilot and names who disagrees."
        return default_responder(call)

    _, state, fake = run_fake(responder, rounds=1, strange_loops=2, **QUIET)
    # one loop: its word with a reason is no echo of its prompt (not asked again), and
    # an answer left unchanged is not reflected on twice
    assert [c.meta.reask for c in fake.calls if c.meta.phase == "strange_loop"] == [False]
    main = state.graph.debates["s1/main"]
    parts = lines.load_parts(main.resolution_parts)
    assert parts is not None and parts["unchanged"] and parts["restored"] == 0
    assert parts["disagreements"] == ["L1N1 vs L1N2: whether the pilot generalises."]
    assert main.resolution.startswith("Position: The passage's case holds for office work only.")
    assert "Unchanged" not in main.resolution


def test_parts_are_read_from_markdown_and_a_text_without_labels_is_the_position() -> None:
    text = (
        "**Position:** Yes, for offices.\n\n## Disagreements (unresolved)\n1. L1N1 vs L1N2: the pilot\n"
        "   generalises or not\n\n**Agreements**:\n- none\n\n"
        "Inferences:\nFrom L1N3 and the passage: costs move."
    )
    parts = lines.parse_parts(text)
    assert parts.parsed and parts.position == "Yes, for offices."
    assert parts.disagreements == ["L1N1 vs L1N2: the pilot generalises or not"]
    assert parts.agreements == [] and parts.inferences == ["From L1N3 and the passage: costs move."]
    plain = "The passage argues for a shorter week. Its evidence is thin."
    weak = lines.parse_parts(plain)
    assert not weak.parsed and weak.position == plain and weak.render(plain) == plain
    kept = lines.restore(lines.parse_parts(_root_parts("L1N1 vs L1N2: X matters.")), weak)
    assert kept.restored == 1
    assert "Disagreements:\n- L1N1 vs L1N2: X matters." in kept.render(plain)


def test_stance_answer_and_confidence_lines_are_read() -> None:
    text = "My analysis.\n**Stance:** changed — because L1N1's second sentence.\nAnswer: **Yes.**\n"
    text += "Confidence: 80%"
    assert lines.stance(text) == ("changed", "L1N1's second sentence")
    assert lines.answer(text) == "Yes" and lines.confidence(text) == 0.8
    assert lines.stance("no line") == (None, None) and lines.confidence("Confidence: high") == 0.8
    assert lines.confidence("Confidence: 7/10") == 0.7 and lines.confidence("Confidence: 0.65 (fair)") == 0.65
    assert lines.tally(["Yes", "yes.", "No", None]) == {"yes": 2, "no": 1}
    # read as an evaluation's exact rule reads them: a number in a sentence is that number
    assert lines.tally(["42", "The answer is 42.", "B) Paris", "B"]) == {"42": 2, "b": 1, "b) paris": 1}
    assert lines.is_unchanged("**Unchanged.**") and lines.is_unchanged("Unchanged: it stands as written.")
    assert not lines.is_unchanged("Unchangeable habits " + "shape the week " * 20)


QUESTION = "Should the city adopt the four-day week for its own staff?"
# (agent, phase, round) -> its answer; any other leaf turn answers "yes". L1N3 is the
# minority: right ("no", the reference) in round 1, talked round to "yes" in its lateral
# turn; L1N1 moves from "yes" to "no" in round 2's lateral turn.
SCRIPT = {("L1N3", "respond", 1): "no", ("L1N1", "lateral", 2): "no"}


def test_a_question_session_stores_stances_and_tallies_and_metrics_count_the_flips(tmp_path: Path) -> None:
    calls: Counter[tuple[str, str]] = Counter()

    def responder(call: ScriptedCall) -> Any:
        agent, phase = call.meta.agent, call.meta.phase
        if call.schema is not None or phase not in ("respond", "lateral") or not agent.startswith("L1"):
            return default_responder(call)
        calls[(agent, phase)] += 1
        said = SCRIPT.get((agent, phase, calls[(agent, phase)]), "yes")
        moved = phase == "lateral" and (agent, calls[(agent, phase)]) in (("L1N3", 1), ("L1N1", 2))
        stance = f"Stance: {'changed' if moved else 'kept'} because of L1N2's second sentence.\n"
        closing = f"Answer: {said}\nConfidence: 0.7"
        return f"{agent} reads the passage.\n{stance if phase == 'lateral' else ''}{closing}"

    client = ScriptedLLM(responder)
    result = dagmca.run(
        PASSAGE,
        question=QUESTION,
        store=tmp_path / "q.db",
        client=client,
        embedder=HashingEmbedder(),
        settings={
            "llm": "fake",
            "max_depth": 0,
            "rounds": 2,
            "cpp": 3,
            "depth": 2,
            "convergence_threshold": 1.0,
        },
    )
    # every respond and lateral prompt of a leaf asks for the answer lines; a lateral one, the stance
    leaf_calls = [
        c for c in client.calls if c.meta.agent.startswith("L1") and c.meta.phase in ("respond", "lateral")
    ]
    assert leaf_calls and all("'Answer:'" in c.prompt for c in leaf_calls)
    assert all("'Stance: kept'" in c.prompt for c in leaf_calls if c.meta.phase == "lateral")
    roots = [c for c in client.calls if c.meta.agent == "L0N1" and c.meta.phase == "observe"]
    # the root is shown the answers as positions with their holders' reasons, no count to side with
    assert "- yes, held by L1N1: of L1N2's second sentence; L1N2: " in roots[0].prompt
    assert "- no, held by L1N1: of L1N2's second sentence\n- yes, held by L1N2: " in roots[1].prompt
    assert not any("yes: 3" in r.prompt or "yes: 2" in r.prompt for r in roots)
    assert all(AGAINST_CONFORMITY in r.prompt for r in roots)

    with open_existing(str(tmp_path / "q.db")) as store:
        nodes = [node_from_record(r) for r in store.nodes(result.id)]
        metrics = session_metrics(store, result.id, HashingEmbedder(), reference="no")
    turns = {t.id.split("/main/", 1)[1]: t for t in nodes if isinstance(t, TurnNode) and "/main/" in t.id}
    assert turns["r1/L1N3/lateral"].stance == "changed"
    assert turns["r1/L1N3/lateral"].because == "of L1N2's second sentence"
    assert turns["r1/L1N3/respond"].answer == "no" and turns["r1/L1N3/respond"].confidence == 0.7
    assert turns["r2/L1N1/lateral"].answer == "no" and turns["r1/L1N2/lateral"].stance == "kept"
    rounds = sorted((r for r in nodes if isinstance(r, RoundNode)), key=lambda r: r.number)
    assert [json.loads(r.answers or "{}") for r in rounds] == [{"yes": 3}, {"yes": 2, "no": 1}]

    (answers,) = metrics.answers
    assert [(r.round, r.changes, r.right_to_wrong, r.wrong_to_right) for r in answers.rounds] == [
        (1, 1, 1, 0),
        (2, 1, 0, 1),
    ]
    assert (answers.right_to_wrong, answers.wrong_to_right) == (1, 1)
    assert answers.stances == {"changed": 2, "kept": 4}
    # `dagmca metrics` prints them as a table of their own
    table = next(t for t in metrics_tables(metrics) if str(t.title).startswith("answers of"))
    assert table.row_count == 2 and "reference: no" in str(table.caption)


def test_a_session_stored_before_parts_and_answers_still_reads() -> None:
    old = NodeRecord(
        id="s0/main", kind=NodeKind.DEBATE, session="s0", created_at="2026-01-01T00:00:00Z",
        props={"origin": "main", "question": "Q?", "resolution": "An answer.", "depth": 0},
    )  # fmt: skip
    debate = node_from_record(old)
    assert isinstance(debate, DebateNode) and debate.resolution_parts is None
    assert lines.load_parts(debate.resolution_parts) is None and debate.resolution == "An answer."


def test_a_session_without_a_question_stores_no_answers(run_fake: RunSession) -> None:
    _, state, fake = run_fake(rounds=1, **QUIET)
    assert not any("'Answer:'" in c.prompt for c in fake.calls)
    nodes = [node_from_record(r) for r in state.handles.store.nodes("s1")]
    assert all(n.answers is None for n in nodes if isinstance(n, RoundNode))
    laterals = [n for n in nodes if isinstance(n, TurnNode) and n.phase.value == "lateral"]
    assert laterals and all(t.answer is None and t.stance == "revised" for t in laterals)


# -- convergence ----------------------------------------------------------------------
FIRST = (
    "Position: A shorter week raises output per hour in offices, where concentrated work was diluted by "
    "meetings.\nDisagreements:\n- L1N1 vs L1N2: L1N1 trusts the British pilot; L1N2 says its firms "
    "selected themselves.\nAgreements:\n- L1N1 and L1N3 agree that hours at a desk measure presence rather "
    "than work done.\nInferences:\n- From L1N2 and L1N3: care and transport would need more staff, so "
    "their costs rise first."
)
# the same points in other words: no material change (and a word overlap under 0.85)
REWORDED = (
    "Position: In offices a shorter week raises output per hour, since meetings diluted the concentrated "
    "work.\nDisagreements:\n- L1N1 vs L1N2: L1N1 trusts the pilot in Britain; L1N2 answers that its firms "
    "selected themselves.\nAgreements:\n- L1N1 and L1N3 agree that desk hours measure presence, not the "
    "work done.\nInferences:\n- From L1N2 and L1N3: transport and care would need more staff, so their "
    "costs rise first."
)
ADDED = (
    FIRST + "\n- From L1N1 and the passage: second jobs may absorb the free day and erase the health gains."
)


def _root_by_round(*texts: str) -> Any:
    seen: Counter[str] = Counter()

    def responder(call: ScriptedCall) -> Any:
        if call.schema is None and call.meta.agent == "L0N1" and call.meta.phase == "observe":
            seen["root"] += 1
            return texts[min(seen["root"], len(texts)) - 1]
        return default_responder(call)

    return responder


def test_convergence_fires_on_reworded_prose_and_not_on_a_point_added(run_fake: RunSession) -> None:
    settings = {
        **QUIET,
        "convergence_threshold": 0.72,
        "rounds": 3,
        "strange_loops": 0,
        "monitor_every": "off",
    }
    _, state, _ = run_fake(_root_by_round(FIRST, REWORDED, REWORDED), **settings)
    main = state.graph.debates["s1/main"]
    assert main.converged and main.rounds == 2
    _, state, _ = run_fake(_root_by_round(FIRST, ADDED, FIRST), session="s2", **settings)
    main = state.graph.debates["s2/main"]
    assert not main.converged and main.rounds == 3


def test_a_reply_capped_too_short_for_the_format_is_not_asked_for_it(run_fake: RunSession) -> None:
    """The local backend's 64-token turns cannot hold four parts: the root is asked for
    its synthesis alone, a lateral turn for no stance line; its text is the position."""
    _, state, fake = run_fake(rounds=1, max_turn_tokens=64, **QUIET)
    prompts = [c.prompt for c in fake.calls if c.schema is None]
    assert prompts and not any(PARTS_ASKED in p or STANCE_ASKED in p for p in prompts)
    parts = lines.load_parts(state.graph.debates["s1/main"].resolution_parts)
    assert parts is not None and not parts["parsed"] and parts["position"]


def test_in_a_question_session_a_changed_tally_is_a_material_change(tmp_path: Path) -> None:
    """The root writes the same words every round, but a leaf's answer turns in round 2:
    the debate does not stop there; in round 3 nothing changes, and it stops."""
    calls: Counter[str] = Counter()

    def responder(call: ScriptedCall) -> Any:
        agent, phase = call.meta.agent, call.meta.phase
        if call.schema is None and agent == "L0N1" and phase == "observe":
            return FIRST
        if call.schema is not None or phase not in ("respond", "lateral") or not agent.startswith("L1"):
            return default_responder(call)
        calls[f"{agent} {phase}"] += 1
        said = "no" if agent == "L1N3" and calls[f"{agent} {phase}"] >= 2 else "yes"
        return f"{agent} reads it.\nStance: kept because nothing new.\nAnswer: {said}\nConfidence: 0.6"

    settings = {"llm": "fake", "max_depth": 0, "rounds": 4, "strange_loops": 0, "monitor_every": "off"}
    result = dagmca.run(
        PASSAGE, question=QUESTION, store=tmp_path / "q.db", client=ScriptedLLM(responder),
        embedder=HashingEmbedder(), settings={**settings, "convergence_threshold": 0.72},
    )  # fmt: skip
    with open_existing(str(tmp_path / "q.db")) as store:
        nodes = [node_from_record(r) for r in store.nodes(result.id)]
    debate = next(n for n in nodes if isinstance(n, DebateNode))
    rounds = sorted((r for r in nodes if isinstance(r, RoundNode)), key=lambda r: r.number)
    assert [r.convergence_score for r in rounds] == [None, 1.0, 1.0]
    assert debate.converged and debate.rounds == 3


def test_labels_take_a_colon_or_stand_alone_and_may_be_singular() -> None:
    from dagmca.prompts.lines import parse_parts

    parts = parse_parts(
        "Position: fares should rise.\nPosition A (L1N2) holds that they should not.\n"
        "## Disagreement\n- L1N1 vs L1N2 on whether fares should rise\nAgreement: none"
    )
    assert parts.parsed and "Position A (L1N2) holds" in parts.position
    assert parts.disagreements == ["L1N1 vs L1N2 on whether fares should rise"]


def test_a_confidence_on_a_ten_point_scale_is_read_as_such() -> None:
    from dagmca.prompts.lines import confidence

    assert confidence("Answer: 4\nConfidence: 8") == 0.8
    assert confidence("Confidence: 80") == 0.8
    assert confidence("Confidence: 0.8") == 0.8
    assert confidence("Confidence: 7/10") == 0.7


def test_a_disagreement_is_kept_only_as_itself_not_by_its_agents_or_settled() -> None:
    from dagmca.prompts.lines import same_point

    said = "L1N1 vs L1N2 on whether the fare should rise"
    assert same_point(said, "L1N1 vs L1N2 on whether the fare should rise at all")
    assert not same_point(said, "L1N1 vs L1N2 on who runs the buses")  # the agents alone
    assert not same_point(said, "L1N1 vs L1N2 on whether the fare should rise: resolved for L1N2")
    assert not same_point(said, "L1N1 vs L1N3 on whether the fare should rise")
