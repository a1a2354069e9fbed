"""A judged decision whose reason still says nothing after the re-ask (under three
words, or its field's description copied back) is stored marked degenerate and does
not act: a converge merges nothing, an `answered` closes no stub, a `duplicate`
merges no stub, a ledger verdict is no source and an entailment check no support."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tests.support.duplicates
from dagmca.debate.events import DuplicateChecked, Event, PairJudged
from dagmca.graph import EdgeType, NodeKind, TensionStatus
from dagmca.llm.fake import ScriptedCall
from dagmca.metrics.session import session_metrics
from dagmca.prompts.schemas import DuplicateVerdict, PairVerdict, StubVerdict
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.duplicates import run_merge
from tests.support.judges import judge_reply
from tests.support.ledger import FROM_PASSAGE, SMALL, claims, edges_of, integrating, run
from tests.support.sessions import QUESTIONS, TOPIC, RunSession, scripted

AGREE = "Pricing works when revenue funds buses and exemptions protect workers."
# a copied field description ("one sentence"), and a reason of two words
HOLLOW = ["one sentence", "They agree."]
JUDGED = (PairVerdict, StubVerdict, DuplicateVerdict)


def hollowed(respond: Any, reason: str, asked: Any = lambda call: call.schema in JUDGED) -> Any:
    """`respond`, with every reason of the calls `asked` replaced by `reason`."""

    def swap(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reason if k == "reason" else swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    def reply(call: ScriptedCall) -> Any:
        out = respond(call)
        return swap(out) if asked(call) else out

    return reply


class Record:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


@pytest.mark.parametrize("reason", HOLLOW)
def test_a_converge_with_a_hollow_reason_merges_nothing(run_fake: RunSession, reason: str) -> None:
    record = Record()
    _, state, fake = run_fake(
        hollowed(scripted(QUESTIONS[:2], {QUESTIONS[0]: AGREE, QUESTIONS[1]: AGREE},
                          pair=lambda a, b: "converge"), reason),
        max_branches=2, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    st = state.handles.store
    assert st.nodes("s1", NodeKind.SYNTHESIS) == [] and st.edges("s1", EdgeType.MERGES_INTO) == []
    [judged] = [e for e in record.events if isinstance(e, PairJudged)]
    assert judged.degenerate and judged.verdict == "undecided"
    assert "reason says nothing" in judged.reason and "judged converge" in judged.reason
    # both orders, each asked again once
    calls = [c for c in fake.calls if c.schema is PairVerdict]
    assert len(calls) == 4 and sum(c.meta.reask for c in calls) == 2
    assert check_store(st, "s1") == []


def test_a_contradict_with_a_hollow_reason_relates_nothing(run_fake: RunSession) -> None:
    record = Record()
    _, state, _ = run_fake(
        hollowed(scripted(QUESTIONS[:2], {QUESTIONS[0]: AGREE, QUESTIONS[1]: AGREE},
                          pair=lambda a, b: "contradict"), "one sentence"),
        max_branches=2, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    assert state.handles.store.edges("s1", EdgeType.CONTRADICTS) == [] and state.graph.contradictions == []
    assert [e.degenerate for e in record.events if isinstance(e, PairJudged)] == [True]


def answers_it(question: str, text: str) -> tuple[str, str]:
    return ("answered", TOPIC) if question == QUESTIONS[3] else ("open", "")


@pytest.mark.parametrize("reason", [None, *HOLLOW])
def test_an_answered_with_a_hollow_reason_closes_no_stub(run_fake: RunSession, reason: str | None) -> None:
    respond = scripted([QUESTIONS[0], QUESTIONS[3]], {QUESTIONS[0]: TOPIC}, stub=answers_it)
    _, state, _ = run_fake(
        respond if reason is None else hollowed(respond, reason),
        max_branches=1, max_depth=1, max_revisits=0, rounds=1, strategy="urgent",
    )  # fmt: skip
    stub = next(t for t in state.graph.tensions.values() if t.question == QUESTIONS[3])
    check = next(c for c in stub.revisit_checks if c.after == "s1/main/b1")
    superseded = state.handles.store.edges("s1", EdgeType.SUPERSEDES)
    [edge] = [
        e for e in state.handles.store.edges("s1", EdgeType.CHECKED_AGAINST)
        if e.source == stub.id and e.target == "s1/main/b1"
    ]  # fmt: skip
    if reason is None:  # the same judge with a sound reason closes it
        assert stub.status is TensionStatus.SUPERSEDED and superseded
        assert not check.degenerate and edge.props["degenerate"] is False
        return
    assert stub.status is TensionStatus.STUB and superseded == []
    assert (check.verdict, check.outcome, check.degenerate) == ("open", "open", True)
    assert "judged answered" in check.reason and edge.props["degenerate"] is True
    stored = state.handles.store.get_node(stub.id)
    assert stored is not None and stored.props["status"] == "stub"
    assert session_metrics(state.handles.store, "s1", HashingEmbedder()).degenerate_reasons >= 1
    assert check_store(state.handles.store, "s1") == []


@pytest.mark.parametrize("reason", HOLLOW)
def test_a_duplicate_with_a_hollow_reason_merges_no_stub(
    store: SQLiteStore, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def judged(call: ScriptedCall, **rules: Any) -> Any:
        return hollowed(lambda c: judge_reply(c, **rules), reason)(call)

    monkeypatch.setattr(tests.support.duplicates, "judge_reply", judged)
    _, tensions, _, recorder, merged = run_merge(store)
    assert merged == [] and all(t.status is TensionStatus.STUB for t in tensions)
    assert store.edges("s", EdgeType.DUPLICATES) == []
    checks = [e for e in recorder.events if isinstance(e, DuplicateChecked)]
    assert checks and all(e.degenerate and not e.merged and e.verdict == "undecided" for e in checks)
    assert any("judged duplicate" in e.reason for e in checks)


@pytest.mark.parametrize("reason", HOLLOW)
def test_ledger_verdicts_with_hollow_reasons_are_no_source(
    store: SQLiteStore, tmp_path: Path, reason: str
) -> None:
    """The passage's own sentence, copied by the integrator: its `states` verdicts carry
    a hollow reason, so none is a source, and the entailment check's hollow reason is
    no support: the claim is unsupported, never `passage` nor emergent."""
    ledger = lambda call: call.meta.agent.startswith("ledger")  # noqa: E731
    run(store, tmp_path, hollowed(integrating(FROM_PASSAGE), reason, ledger), **SMALL)
    copied = claims(store)[FROM_PASSAGE]
    assert copied.origin.value == "unsupported" and copied.degenerate_check
    assert copied.checks and all(c.degenerate and c.verdict.value == "unrelated" for c in copied.checks)
    assert any("judged states" in c.reason for c in copied.checks)
    assert edges_of(store, copied, EdgeType.DERIVES_FROM) == []
    assert "reason says nothing" in copied.reason
    assert session_metrics(store, "s1", HashingEmbedder()).degenerate_reasons == len(copied.checks) + 1
    assert check_store(store, "s1") == []
