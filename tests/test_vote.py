"""Vote (MassGen-style) and ensemble semantics, on the scripted fake."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedCall, default_responder
from dagmca.reports.models import MCAReport
from dagmca.store.check import check_store
from tests.support.sessions import RunSession

PEERS: dict[str, Any] = {"max_depth": 0, "monitor_every": "off", "strange_loops": 0}


def answer_of(agent: str, n: int = 1) -> str:
    return f"Answer {n} by {agent}: pricing shifts who pays for roads."


def vote(label: str) -> dict[str, Any]:
    return {"decision": {"action": "vote", "vote_for": label, "reason": "best"}}


def new_answer(text: str) -> dict[str, Any]:
    return {"decision": {"action": "new_answer", "new_answer": text, "reason": "better"}}


def script(decide: Callable[[ScriptedCall], Any]) -> Callable[[ScriptedCall], Any]:
    """First answers are fixed texts; later turns go to `decide(call)`."""

    def responder(call: ScriptedCall) -> Any:
        if call.meta.phase == "answer":
            return answer_of(call.meta.agent)
        if call.meta.phase == "vote":
            return decide(call)
        return default_responder(call)

    return responder


def report(tmp_path: Path) -> MCAReport:
    return MCAReport.model_validate_json((tmp_path / "out" / "s1" / "mca_report.json").read_text())


def events(rep: MCAReport, kind: str) -> list[Any]:
    return [e for e in rep.tracker if e.kind == kind]


def test_first_answers_are_written_before_seeing_any_peer(run_fake: RunSession, tmp_path: Path) -> None:
    _, state, fake = run_fake(script(lambda c: vote("agent1.1")), protocol="vote", cpp=3, **PEERS)
    first = [c for c in fake.calls if c.meta.phase == "answer"]
    assert sorted(c.meta.agent for c in first) == ["L1N1", "L1N2", "L1N3"]
    for call in first:
        for other in ("L1N1", "L1N2", "L1N3"):
            assert answer_of(other) not in call.prompt
        assert "agent1.1" not in call.prompt and "agent2.1" not in call.prompt
    # later prompts show peers under anonymous labels, never their names or perspectives
    later = next(c for c in fake.calls if c.meta.phase == "vote" and c.meta.agent == "L1N1")
    assert "Answer agent2.1" in later.prompt and answer_of("L1N2") in later.prompt
    assert "L1N2" not in later.prompt.replace(answer_of("L1N2"), "") and "creative" not in later.prompt
    rep = report(tmp_path)
    assert rep.winner == "agent1.1" and rep.final_response
    assert [e.label for e in events(rep, "answer")] == ["agent1.1", "agent2.1", "agent3.1"]
    assert check_store(state.handles.store, "s1") == []


def test_a_new_answer_resets_every_vote_and_reaches_the_peers(run_fake: RunSession, tmp_path: Path) -> None:
    def decide(call: ScriptedCall) -> Any:
        agent, seen_new = call.meta.agent, "agent2.2" in call.prompt
        if agent == "L1N2" and not seen_new:
            return new_answer("A sharper answer by L1N2 about exemptions.")
        return vote("agent2.2" if seen_new else "agent2.1")

    _, state, fake = run_fake(script(decide), protocol="vote", cpp=3, **PEERS)
    rep = report(tmp_path)
    # round 2: L1N1 votes agent2.1, then L1N2's new answer resets it; L1N3's vote for the
    # replaced agent2.1 does not count
    assert [(e.round, e.kind, e.agent) for e in rep.tracker if e.round == 2] == [
        (2, "vote", "L1N1"),
        (2, "new_answer", "L1N2"),
        (2, "restart", "L1N2"),
        (2, "refused", "L1N3"),
    ]
    # round 3: everyone is asked again and sees the new answer
    round3 = [c for c in fake.calls if c.meta.phase == "vote" and "agent2.2" in c.prompt]
    assert sorted(c.meta.agent for c in round3) == ["L1N1", "L1N2", "L1N3"]
    assert all("A sharper answer by L1N2" in c.prompt for c in round3)
    assert rep.winner == "agent2.2" and rep.convergence.converged
    restart = [n for n in state.handles.store.nodes("s1", NodeKind.TURN) if n.props["phase"] == "restart"]
    assert len(restart) == 1 and "resets 1 vote" in str(restart[0].props["text"])


def test_a_mixed_decision_is_rejected_and_asked_again(run_fake: RunSession, tmp_path: Path) -> None:
    tries: dict[str, int] = {}

    def decide(call: ScriptedCall) -> Any:
        tries[call.meta.agent] = tries.get(call.meta.agent, 0) + 1
        if call.meta.agent == "L1N1" and tries["L1N1"] == 1:  # both a vote and an answer
            return {"decision": {"action": "vote", "vote_for": "agent2.1", "new_answer": "x", "reason": "r"}}
        if call.meta.agent == "L1N2" and tries["L1N2"] == 1:  # no action at all
            return {"decision": {"reason": "undecided"}}
        return vote("agent3.1")

    _, _, fake = run_fake(script(decide), protocol="vote", cpp=3, decision_retries=2, **PEERS)
    rep = report(tmp_path)
    assert [e.agent for e in events(rep, "rejected")] == ["L1N1", "L1N2"]
    assert tries == {"L1N1": 2, "L1N2": 2, "L1N3": 1}
    second = [c for c in fake.calls if c.meta.agent == "L1N1" and c.meta.phase == "vote"][1]
    assert "Your previous reply was rejected" in second.prompt
    assert rep.winner == "agent3.1" and [e.agent for e in events(rep, "vote")] == ["L1N1", "L1N2", "L1N3"]


def test_retries_are_bounded(run_fake: RunSession, tmp_path: Path) -> None:
    def decide(call: ScriptedCall) -> Any:
        if call.meta.agent == "L1N1":
            return {"decision": {"reason": "never decides"}}
        return vote("agent2.1")

    _, _, fake = run_fake(
        script(decide), protocol="vote", cpp=2, decision_retries=1, max_vote_rounds=3, **PEERS
    )
    asked = [c for c in fake.calls if c.meta.agent == "L1N1" and c.meta.phase == "vote"]
    assert len(asked) == 3 * 2  # three rounds, one try and one retry each
    rep = report(tmp_path)
    assert len(events(rep, "no_decision")) == 3 and rep.winner == "agent2.1"
    assert not rep.convergence.converged


def test_the_fairness_lead_cap_holds(run_fake: RunSession, tmp_path: Path) -> None:
    """L1N1 always wants to answer again; with a lead of 1 it can post one more answer
    than the slowest, and is then told it may only vote."""
    posted = iter(range(100))

    def decide(call: ScriptedCall) -> Any:
        if call.meta.agent == "L1N1":
            return new_answer(f"Yet another answer {next(posted)} by L1N1.")
        labels = re.findall(r"Answer (agent\d\.\d)", call.prompt)
        return vote(labels[-1])

    _, _, fake = run_fake(
        script(decide), protocol="vote", cpp=3, fairness_lead=1, max_new_answers_per_agent=5,
        decision_retries=0, max_vote_rounds=4, **PEERS,
    )  # fmt: skip
    rep = report(tmp_path)
    assert [e.label for e in events(rep, "new_answer")] == ["agent1.2"]
    capped = [c for c in fake.calls if c.meta.agent == "L1N1" and "may not write another answer" in c.prompt]
    assert capped, "once ahead, L1N1 is offered only a vote"


def test_per_agent_and_total_caps(run_fake: RunSession, tmp_path: Path) -> None:
    n = iter(range(100))

    def decide(call: ScriptedCall) -> Any:
        if "may not write another answer" in call.prompt:
            return vote(re.findall(r"Answer (agent\d\.\d)", call.prompt)[0])
        return new_answer(f"Answer number {next(n)} by {call.meta.agent}.")

    run_fake(
        script(decide), protocol="vote", cpp=3, fairness_lead=5, max_new_answers_per_agent=2,
        max_new_answers_total=3, max_vote_rounds=8, **PEERS,
    )  # fmt: skip
    rep = report(tmp_path)
    per_agent: dict[str, int] = {}
    for e in events(rep, "new_answer"):
        per_agent[e.agent] = per_agent.get(e.agent, 0) + 1
    assert sum(per_agent.values()) == 3 and max(per_agent.values()) <= 2


def test_a_timed_out_agent_is_wrapped_up_and_its_answer_kept(run_fake: RunSession, tmp_path: Path) -> None:
    def delay(call: ScriptedCall) -> float:
        return 1.0 if call.meta.agent == "L1N3" and call.meta.phase == "vote" else 0.0

    _, state, _ = run_fake(
        script(lambda c: vote("agent3.1")), protocol="vote", cpp=3, agent_timeout_s=0.3, delay=delay, **PEERS
    )
    rep = report(tmp_path)
    timeouts = events(rep, "timeout")
    assert [(e.agent, e.label) for e in timeouts] == [("L1N3", "agent3.1")]
    # the others' votes for L1N3's answer count: its work is not lost
    assert rep.winner == "agent3.1" and rep.convergence.converged
    kinds = [
        n.props["phase"] for n in state.handles.store.nodes("s1", NodeKind.TURN) if n.props["agent"] == "L1N3"
    ]
    assert "timeout" in kinds and "answer" in kinds


def test_majority_wins_and_ties_go_to_the_earliest_answer(run_fake: RunSession, tmp_path: Path) -> None:
    ballots = {"L1N1": "agent3.1", "L1N2": "agent3.1", "L1N3": "agent2.1", "L1N4": "agent3.1"}
    run_fake(script(lambda c: vote(ballots[c.meta.agent])), protocol="vote", cpp=4, **PEERS)
    assert report(tmp_path).winner == "agent3.1"


def test_a_tie_goes_to_the_earliest_posted_answer(run_fake: RunSession, tmp_path: Path) -> None:
    ballots = {"L1N1": "agent4.1", "L1N2": "agent2.1", "L1N3": "agent2.1", "L1N4": "agent4.1"}
    _, _, fake = run_fake(script(lambda c: vote(ballots[c.meta.agent])), protocol="vote", cpp=4, **PEERS)
    rep = report(tmp_path)
    assert rep.winner == "agent2.1"
    present = [c for c in fake.calls if c.meta.phase == "present"]
    assert [c.meta.agent for c in present] == ["L1N2"] and answer_of("L1N2") in present[0].prompt


def test_ensemble_answers_blind_votes_once_and_the_winner_synthesizes(
    run_fake: RunSession, tmp_path: Path
) -> None:
    ballots = {"L1N1": "agent2.1", "L1N2": "agent2.1", "L1N3": "agent1.1"}

    def responder(call: ScriptedCall) -> Any:
        if call.meta.phase == "answer":
            return answer_of(call.meta.agent)
        if call.meta.phase == "vote":
            return {"vote_for": ballots[call.meta.agent], "reason": "clearest"}
        return default_responder(call)

    _, state, fake = run_fake(responder, protocol="ensemble", cpp=3, **PEERS)
    calls = [c for c in fake.calls if c.meta.phase in ("answer", "vote", "synthesize")]
    assert len(calls) == 2 * 3 + 1
    for call in (c for c in calls if c.meta.phase == "answer"):
        assert not any(answer_of(a) in call.prompt for a in ("L1N1", "L1N2", "L1N3"))
    synth = [c for c in calls if c.meta.phase == "synthesize"]
    assert [c.meta.agent for c in synth] == ["L1N2"]
    assert answer_of("L1N1") in synth[0].prompt and answer_of("L1N3") in synth[0].prompt
    rep = report(tmp_path)
    assert rep.protocol == "ensemble" and rep.winner == "agent2.1"
    assert rep.rounds[1].agents["L1N3"].vote_for == "agent1.1"
    assert check_store(state.handles.store, "s1") == []


@pytest.mark.slow
def test_a_ballot_round_has_no_sibling_similarity(run_fake: RunSession, tmp_path: Path) -> None:
    """Ballots are not answers: a round where everyone only votes measures nothing."""
    run_fake(script(lambda c: {"vote_for": "agent1.1", "reason": "r"}), protocol="ensemble", cpp=3, **PEERS)
    rep = report(tmp_path)
    assert rep.rounds[0].mean_sibling_similarity is not None and rep.rounds[1].mean_sibling_similarity is None
    assert len(rep.summary_metrics.mean_sibling_similarity) == 1
