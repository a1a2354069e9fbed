"""`first-vote` as Choi et al. (2025) define it: the plurality of the debate's agents'
answers from the respond phase of round 1, before any agent has read another, each
read by the short-answer step every arm's answer goes through, and charged the calls it
rests on; a session with no first-round answer leaves the task unread, never wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from dagmca.cli.app import app
from dagmca.evaluation import Task
from dagmca.evaluation.arms import DEFAULT_ARMS
from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.store import open_store
from dagmca.store.check import check_store
from tests.support.evals import EVAL, SID, run

ANSWER_LINE = re.compile(r"^Answer: (.+)$", re.M)


def swayed(tasks: list[Task]) -> ScriptedLLM:
    """Agents who answer alone two of three right (L1N3 wrong), then all take up a wrong
    answer in the lateral exchange, so the debate ends wrong; the short-answer step
    reads the answer line of the text it is shown."""
    right = {t.id: str(t.answer) for t in tasks}

    def respond(call: ScriptedCall) -> Any:
        if call.schema is ShortAnswer:
            if call.meta.agent == "first-answer":  # a first-round answer, quoted in the prompt
                found = ANSWER_LINE.findall(call.messages[-1]["content"])
                return {"answer": found[-1] if found else "no answer"}
            return {"answer": "-1"}  # the debate's final answer: wrong
        text = default_responder(call)
        m = SID.match(call.meta.debate.split("/")[0])
        if call.schema is not None or m is None or not isinstance(text, str) or "Answer:" not in text:
            return text
        said = right[m["task"]] if call.meta.phase == "respond" and call.meta.agent != "L1N3" else "-1"
        return re.sub(r"(?m)^Answer: .*$", f"Answer: {said}", text)

    return ScriptedLLM(respond)


def tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(1, n + 1)]


def test_first_vote_is_right_where_the_agents_began_right_and_the_debate_ended_wrong(
    tmp_path: Path,
) -> None:
    found = tasks(4)
    client = swayed(found)
    report, _ = run(tmp_path, client, found, "mca,first-vote")
    mca, first = report.arms
    assert mca.accuracy is not None and mca.accuracy.value == 0.0
    assert first.accuracy is not None and first.accuracy.value == 1.0 and first.protocol == "first-vote"
    (c,) = report.comparisons
    assert (c.arm, c.baseline, c.wins, c.losses) == ("mca", "first-vote", 0, 4)
    # each first-round answer read by the short-answer call: three a task, in first-vote's cost
    extracted = [c for c in client.calls if c.meta.agent == "first-answer"]
    assert len(extracted) == 3 * 4
    assert all("Answer:" in c.messages[-1]["content"] for c in extracted)
    # its cost: the first round's three respond calls it rests on, and its three extractions
    assert first.calls == 4 * (3 + 3)
    assert report.spend is not None and report.spend.arms.calls == mca.calls + 4 * 3  # counted once
    with open_store(str(tmp_path / "e.db")) as st:
        for t in found:
            session = f"{EVAL}-mca-{t.id}-r0"
            rounds = [n for n in st.nodes(session, NodeKind.ROUND) if n.props["debate"] == f"{session}/main"]
            first_round = min(rounds, key=lambda n: int(str(n.props["number"])))
            assert json.loads(str(first_round.props["answers_before"])) == {str(t.answer): 2, "-1": 1}
            assert json.loads(str(first_round.props["answers"])) == {"-1": 3}
            assert check_store(st, session) == []  # the session's graph holds its invariants
    # a rerun reads every extraction back from the cache
    asked = len(client.calls)
    again, _ = run(tmp_path, client, found, "mca,first-vote")
    assert len(client.calls) == asked and again.arms[1].accuracy == first.accuracy


def test_a_session_without_first_round_answers_leaves_first_vote_unread_not_wrong(tmp_path: Path) -> None:
    found = tasks(3)
    client = swayed(found)
    run(tmp_path, client, found, "mca,first-vote")
    with open_store(str(tmp_path / "e.db")) as st:  # t1's debate gave no first-round text
        session = f"{EVAL}-mca-t1-r0"
        turns = [n for n in st.nodes(session, NodeKind.TURN) if n.props.get("phase") == "respond"]
        st.write(nodes=[n.model_copy(update={"props": {**n.props, "text": ""}}) for n in turns])
    report, _ = run(tmp_path, client, found, "mca,first-vote")
    first = report.arms[1]
    assert first.unread == 1
    assert first.accuracy is not None and (first.accuracy.scored, first.accuracy.correct) == (2, 2)
    assert [r.correct for r in report.results if r.arm == "first-vote"] == [None, True, True]


def test_first_vote_is_a_default_arm_and_in_the_json_with_its_cost() -> None:
    assert DEFAULT_ARMS.split(",") == ["mca", "vote", "single", "first-vote"]


def test_first_vote_is_among_the_json_arms_with_an_accuracy(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    args = ["eval", str(path), "--arms", "mca,first-vote", "--llm", "fake", "--store", str(tmp_path / "c.db")]
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    arms = {a["arm"]: a for a in json.loads(done.stdout)["arms"]}
    assert arms["first-vote"]["calls"] > 0 and arms["first-vote"]["accuracy"]["scored"] == 1
