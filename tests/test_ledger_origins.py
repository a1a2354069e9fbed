"""The ledger tells emergence from invention: the passage is a source (origin
`passage`), and a claim that no turn or passage sentence states gets one entailment
check, which names what it follows from: `emergent` when that takes turns by two or
more agents, `inferred` when the passage or one agent suffices, `unsupported` when it
does not follow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tests.support.ledger as ledger_support
from dagmca.debate.dag.judge import quoted_sentence
from dagmca.graph import CallPhase, EdgeType
from dagmca.llm.fake import ScriptedCall
from dagmca.metrics.ledger import arm_shares
from dagmca.prompts.ledger import entailment_schema
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.judges import ledger_reply, sentences_of
from tests.support.ledger import (
    DRAWN,
    FROM_PASSAGE,
    INFERRED,
    REPEATS,
    SMALL,
    B,
    C,
    claims,
    debate,
    edges_of,
    integrating,
    judge_rule,
    run,
)
from tests.support.strong_fake import LONG_PASSAGE

FABRICATED = "Seoul abolished its congestion charge in 2019 after a binding referendum."


def test_a_copied_passage_sentence_is_passage_and_a_fabricated_claim_is_unsupported(
    store: SQLiteStore, tmp_path: Path
) -> None:
    _, _, fake = run(store, tmp_path, integrating(f"{FROM_PASSAGE} {FABRICATED}"), **SMALL)
    made = claims(store)
    copied, invented = made[FROM_PASSAGE], made[FABRICATED]
    assert (copied.origin.value, invented.origin.value) == ("passage", "unsupported")
    # the passage is a source: the claim derives from the session's node, by the sentence
    derives = {e.target: e.props for e in edges_of(store, copied, EdgeType.DERIVES_FROM)}
    assert derives["s1"]["verdict"] == "states" and derives["s1"]["sentence"] == FROM_PASSAGE
    # an agent repeated it: the turn is a source too, but the debate did not add it
    assert "s1/main/r2/L1N1/respond" in derives and not copied.first_stated_at
    assert "the passage states it" in copied.reason
    assert not edges_of(store, invented, EdgeType.DERIVES_FROM) and "does not follow" in invented.reason
    # one entailment check, for the claim no text states, and none for the copied one
    checks = [c for c in fake.calls if c.meta.agent == "ledger-entailment"]
    assert [FABRICATED in c.prompt for c in checks] == [True]
    assert checks[0].meta.phase == CallPhase.LEDGER and "Text 0 is the passage" in checks[0].prompt
    shares = arm_shares(store, "s1")
    assert shares is not None and (shares.passage, shares.unsupported, shares.emergent) == (0.5, 0.5, 0.0)
    assert check_store(store, "s1") == []


def test_the_entailment_check_tells_emergent_from_inferred(store: SQLiteStore, tmp_path: Path) -> None:
    final = " ".join([DRAWN, INFERRED])
    _, _, fake = run(store, tmp_path, integrating(final), **SMALL)
    made = claims(store)
    drawn, inferred = made[DRAWN], made[INFERRED]
    assert drawn.origin.value == "emergent" and drawn.agents == ["analytical", "creative"]
    sources = {e.target: e.props for e in edges_of(store, drawn, EdgeType.DERIVES_FROM)}
    assert {p["verdict"] for p in sources.values()} == {"supports"}
    assert {p["sentence"] for p in sources.values()} == {B, C}
    assert inferred.origin.value == "inferred" and inferred.agents == []
    [source] = edges_of(store, inferred, EdgeType.DERIVES_FROM)
    assert (source.target, source.props["verdict"], source.props["sentence"]) == (
        "s1",
        "supports",
        FROM_PASSAGE,
    )
    assert "it follows from the passage" in inferred.reason
    assert len([c for c in fake.calls if c.meta.agent == "ledger-entailment"]) == 2
    assert check_store(store, "s1") == []


def test_the_entailment_check_asks_for_the_evidence_before_the_verdict() -> None:
    assert list(entailment_schema(3, True).model_fields) == ["support", "reason", "verdict"]


def test_a_claim_supported_only_by_quoting_the_word_the_is_not_emergent(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """An entailment judge that names agents' turns by quoting "the" from each quotes no
    sentence: the invented claim is unsupported, not inferred or emergent."""
    invented = "The charge's revenue funds night buses, and a cleaner's wage share fell by half in 2019."
    responder = debate(REPEATS, invented, judge_rule())

    def hollow_quotes(claim: str, texts: list[str]) -> list[tuple[int, str]]:
        if claim != invented:
            return []
        return [(i, "the") for i, t in enumerate(texts) if i and (B in t or C in t)]

    def respond(call: ScriptedCall) -> Any:
        traced = ledger_reply(call, sentences_of, judge_rule(), hollow_quotes)
        return traced if traced is not None else responder(call)

    _, _, fake = run(store, tmp_path, respond, **SMALL)
    made = claims(store)[invented]
    assert made.origin.value == "unsupported" and made.agents == []
    assert not edges_of(store, made, EdgeType.DERIVES_FROM)
    checks = [c.prompt for c in fake.calls if c.meta.agent == "ledger-entailment"]
    assert any(B in p or C in p for p in checks)  # an agent's turn was offered, and its "the" refused


def test_a_quote_stands_for_a_sentence_only_when_it_has_substance() -> None:
    text = f"{B} {C}"
    assert quoted_sentence("the", text) is None
    assert quoted_sentence("a flat charge", text) is None
    assert quoted_sentence("fund night buses for early-shift workers", text) == B  # the whole sentence
    assert quoted_sentence("A flat charge takes a larger share of a cleaner's wage", text) == C


LONG_SENTENCE = "Hours at a desk are not the same as hours of effective work."


def test_a_long_passages_sentence_is_quoted_as_text_0_and_checked_against_the_same(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long passage reaches prompts as a map of sections: the ledger judge reads text 0
    as the passage's own sentences nearest the claim, quoted, so an integrator that
    copies one of them gets origin `passage`, by that sentence."""
    monkeypatch.setattr(ledger_support, "PASSAGE", LONG_PASSAGE)
    final = f"{LONG_SENTENCE} {FABRICATED}"
    _, state, fake = run(store, tmp_path, integrating(final), **SMALL, context_window=4096)
    assert state.prompts.passage_mode == "sections"
    copied = claims(store)[LONG_SENTENCE]
    [judged] = [c for c in fake.calls if c.meta.agent == "ledger" and f"trace: {LONG_SENTENCE}" in c.prompt]
    zero = judged.prompt.split("Text 0, the passage's sentences nearest the claim")[1].split("</turn>")[0]
    assert LONG_SENTENCE in zero
    assert LONG_SENTENCE not in judged.prompt.split("</passage>")[0]  # the map at the top has not its words
    assert copied.origin.value == "passage"
    derives = {e.target: e.props for e in edges_of(store, copied, EdgeType.DERIVES_FROM)}
    assert derives["s1"]["sentence"] == LONG_SENTENCE
    assert claims(store)[FABRICATED].origin.value == "unsupported"


WITH_PASSAGE = (
    "Night buses paid for by the charge would offset what a flat charge takes from a cleaner's wage, "
    "since congestion is a cost each driver imposes on others."
)
PASSAGE_AND_BC = (  # the passage's sentence, L1N1's and L1N2's points, joined
    "Since congestion is a cost each driver imposes on others, revenue from the charge should fund "
    "night buses, as a flat charge takes a larger share of a cleaner's wage."
)


def test_a_claim_the_passage_supports_is_inferred_never_emergent(store: SQLiteStore, tmp_path: Path) -> None:
    """Two agents' turns and a passage sentence are what WITH_PASSAGE follows from: the
    passage supports it, so it is inferred. PASSAGE_AND_BC joins a part the passage
    states and a part one agent states: the passage's part counts, and it is inferred."""

    def rule(claim: str, text: str) -> tuple[str, str]:
        if claim == PASSAGE_AND_BC:
            for part in (FROM_PASSAGE, B, C):
                if part.rstrip(".") in text:
                    return "partial", part
        return judge_rule()(claim, text)

    def entailed(claim: str, texts: list[str]) -> list[tuple[int, str]]:
        if claim not in (WITH_PASSAGE, PASSAGE_AND_BC):
            return []
        agents = [(i, s) for i, t in enumerate(texts) for s in (B, C) if i and s in t]
        return [*agents, (0, FROM_PASSAGE)] if FROM_PASSAGE.rstrip(".") in texts[0] else agents

    responder = debate(REPEATS, f"{WITH_PASSAGE} {PASSAGE_AND_BC}", rule)

    def respond(call: ScriptedCall) -> Any:
        traced = ledger_reply(call, sentences_of, rule, entailed)
        return traced if traced is not None else responder(call)

    _, _, fake = run(store, tmp_path, respond, **SMALL)
    made = claims(store)
    drawn, joined = made[WITH_PASSAGE], made[PASSAGE_AND_BC]
    checks = [
        c.prompt for c in fake.calls if c.meta.agent == "ledger-entailment" and WITH_PASSAGE in c.prompt
    ]
    assert checks and B in checks[0] and C in checks[0]  # two agents' turns were offered as well
    assert drawn.origin.value == "inferred" and drawn.agents == ["analytical", "creative"]
    assert {e.target for e in edges_of(store, drawn, EdgeType.DERIVES_FROM)} >= {"s1"}
    assert joined.origin.value == "inferred", joined.reason
    assert ("s1", "partial") in {(k.node, k.verdict.value) for k in joined.checks}  # the passage's part
    assert "the passage states a part of it" in joined.reason
    assert check_store(store, "s1") == []
