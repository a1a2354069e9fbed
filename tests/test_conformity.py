"""Conformity and answers read as eval reads them: every prompt that shows an agent
another agent's answer carries the clause against conformity (the root's observation
and strange loop too, where a tally used to be a count to side with); a lateral turn
whose stance line says the opposite of what its answer did is counted; and a question
session's answers are read by the scorer an evaluation uses, so a flip in `metrics
--reference` is a flip in `eval`."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import dagmca
from dagmca.cli.app import main
from dagmca.evaluation.scoring import score
from dagmca.evaluation.tasks import Task
from dagmca.graph import TurnNode, node_from_record
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.metrics.answers import Reading, is_right, tally
from dagmca.metrics.session import session_metrics
from dagmca.prompts.agents import AGAINST_CONFORMITY
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_existing
from tests.support.sessions import PASSAGE

QUESTION = "Which city's charge is the model the passage points to?"
AGENT = re.compile(r"^L\d+N\d+$")


def marked(call: ScriptedCall, seen: Counter[tuple[str, str]]) -> str:
    """A text no other turn says: who, in which phase, which time."""
    key = (call.meta.agent, str(call.meta.phase))
    seen[key] += 1
    return f"{key[0]} in {key[1]}, call {seen[key]}, holds that Stockholm's charge is the model."


SESSIONS: dict[str, dict[str, Any]] = {
    # a tree of three levels: leaves, coordinators (observe, lateral among coordinators), the
    # root (observe, strange loop); two rounds, so a later response weighs the discussion
    "mca": dict(cpp=2, depth=3, rounds=2, convergence_threshold=1.0),
    "vote": dict(protocol="vote", cpp=3, depth=2),
    "ensemble": dict(protocol="ensemble", cpp=3, depth=2),
    "decompose": dict(protocol="decompose", cpp=3, depth=2),
}


@pytest.mark.parametrize("protocol", sorted(SESSIONS))
def test_every_prompt_that_shows_a_peers_answer_carries_the_clause(protocol: str, tmp_path: Path) -> None:
    seen: Counter[tuple[str, str]] = Counter()

    def responder(call: ScriptedCall) -> Any:
        if call.schema is not None or not AGENT.match(call.meta.agent):
            return default_responder(call)
        return f"{marked(call, seen)}\nAnswer: Stockholm\nConfidence: 0.6"

    client = ScriptedLLM(responder)
    settings = {"llm": "fake", "max_depth": 0, "monitor_every": "off", "ledger": "off", **SESSIONS[protocol]}
    result = dagmca.run(
        PASSAGE, question=QUESTION, store=tmp_path / "c.db", client=client,
        embedder=HashingEmbedder(), settings=settings,
    )  # fmt: skip
    with open_existing(str(tmp_path / "c.db")) as store:
        turns = [n for n in map(node_from_record, store.nodes(result.id)) if isinstance(n, TurnNode)]
    showing = []
    for call in client.calls:
        if not AGENT.match(call.meta.agent):
            continue
        peers = [t for t in turns if t.debate == call.meta.debate and t.agent != call.meta.agent]
        if any(len(t.text.split()) >= 8 and t.text.split("\n")[0] in call.prompt for t in peers):
            showing.append(call)
            assert AGAINST_CONFORMITY in call.prompt, (call.meta.agent, call.meta.phase)
    phases = {str(c.meta.phase) for c in showing}
    expected = {
        "mca": {"lateral", "observe", "respond", "strange_loop"},
        "vote": {"vote", "present"},
        "ensemble": {"vote", "synthesize"},
        "decompose": {"synthesize"},
    }[protocol]
    assert expected <= phases, phases  # the check saw every kind of prompt that shows a peer's answer
    if protocol == "mca":
        roots = [c for c in showing if c.meta.agent == "L0N1"]
        assert {str(c.meta.phase) for c in roots} == {"observe", "strange_loop"}


# (agent, phase, round) -> (its answer, its stance line); any other leaf turn answers B and keeps
SCRIPT: dict[tuple[str, str, int], tuple[str, str]] = {
    ("L1N1", "respond", 1): ("B) Paris", ""),
    ("L1N1", "lateral", 1): ("A) London", "changed"),  # right to wrong, and says so
    ("L1N2", "lateral", 1): ("C", "kept"),  # its answer changed, its stance says it kept it
    ("L1N3", "lateral", 1): ("B", "changed"),  # it says it changed, its answer did not
}
CHOICES = ["London", "Paris", "Rome"]


def answering(call: ScriptedCall, seen: Counter[tuple[str, str]]) -> Any:
    agent, phase = call.meta.agent, str(call.meta.phase)
    if call.schema is not None or phase not in ("respond", "lateral") or not agent.startswith("L1"):
        return default_responder(call)
    seen[(agent, phase)] += 1
    said, stance = SCRIPT.get((agent, phase, seen[(agent, phase)]), ("B", "kept"))
    line = f"Stance: {stance} because of the passage's last sentence.\n" if phase == "lateral" else ""
    return f"{agent} weighs London against Stockholm.\n{line}Answer: {said}\nConfidence: 0.7"


@pytest.fixture
def answered(tmp_path: Path) -> str:
    seen: Counter[tuple[str, str]] = Counter()
    result = dagmca.run(
        PASSAGE, question=QUESTION, store=tmp_path / "q.db", client=ScriptedLLM(lambda c: answering(c, seen)),
        embedder=HashingEmbedder(),
        settings={"llm": "fake", "max_depth": 0, "rounds": 1, "cpp": 3, "depth": 2, "monitor_every": "off"},
    )  # fmt: skip
    return result.id


def test_a_stance_that_says_the_opposite_of_the_answer_is_counted(answered: str, tmp_path: Path) -> None:
    with open_existing(str(tmp_path / "q.db")) as store:
        m = session_metrics(store, answered, HashingEmbedder())
    (answers,) = m.answers
    # L1N2 kept its stance and changed its answer; L1N3 said it changed and did not;
    # L1N1 said it changed, and did
    assert answers.stance_mismatch == 2
    assert answers.stances == {"changed": 2, "kept": 1}


def test_a_choice_answer_is_right_in_metrics_as_in_eval(
    answered: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """L1N1 answers "B) Paris", then "A) London": against the reference "B" that is a
    flip from right to wrong, as eval's scorer reads "B) Paris" (L1N2's B to C is the
    other)."""
    task = Task(id="t", question=QUESTION, choices=CHOICES, answer="B")
    assert score(task, "B) Paris").correct and not score(task, "A) London").correct
    monkeypatch.setattr("dagmca.similarity.choose.make_embedder", lambda name: HashingEmbedder())
    store = str(tmp_path / "q.db")
    choices = [a for c in CHOICES for a in ("--choice", c)]
    assert main(["metrics", answered, "--store", store, "--reference", "B", *choices, "--json"]) == 0
    (answers,) = json.loads(capsys.readouterr().out)["answers"]
    assert (answers["right_to_wrong"], answers["wrong_to_right"]) == (2, 0)
    assert answers["rule"] == "choice"
    # a tally counts the answers the scorer reads as one together
    reading = Reading(rule="choice", choices=CHOICES)
    assert tally(["B) Paris", "A) London", "b", "Paris"], reading) == {"B) Paris": 3, "A) London": 1}


@pytest.mark.parametrize(
    ("answer", "reference", "rule", "choices"),
    [
        ("B) Paris", "B", "choice", CHOICES),
        ("3.1416", "3.14", "numeric", None),
        ("The answer is 42", "42", "exact", None),
    ],
)
def test_an_answer_is_right_in_metrics_when_eval_scores_it_right(
    answer: str, reference: str, rule: Any, choices: list[str] | None
) -> None:
    task = Task(id="t", question=QUESTION, answer=reference, choices=choices, scoring=rule)
    assert score(task, answer).correct
    assert is_right(answer, reference, Reading(rule=rule, choices=choices))
