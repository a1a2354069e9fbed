"""The ledger credits the debate with what its specialists said, no more: a claim whose
parts two specialists state is `recombined` only when one check finds those parts
together support all of it; a claim that only the root or a coordinator states is the
`integrator`'s, never a specialist's `single` or the group's `emergent`; and the root's
text plus one specialist's do not make a claim emergent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagmca.cli.render import claims_row
from dagmca.graph import EdgeType
from dagmca.metrics.ledger import arm_shares
from dagmca.metrics.session import session_metrics
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.ledger import DRAWN, SAID, SMALL, B, C, claims, debate, edges_of, run

X = "A congestion charge cuts peak traffic in the charged zone."
Y = "The charge also cuts asthma admissions among children who live near the ring road."
X_AND_Y = (
    "A congestion charge cuts peak traffic in the charged zone and also cuts asthma admissions among "
    "children who live near the ring road."
)
BOTH_X = {  # two specialists state X, and nobody states Y
    ("L1N1", "respond", 1): f"{X} Drivers shift to the shoulder hours.",
    ("L1N2", "respond", 1): f"{X} Bus ridership rises in the first months.",
}


def x_only(claim: str, text: str) -> tuple[str, str]:
    """The judge: a text with X states a part of X_AND_Y; nothing states it whole."""
    if claim == X_AND_Y and X.rstrip(".") in text:
        return "partial", X
    return "unrelated", ""


def needs_both(claim: str, texts: list[str]) -> list[tuple[int, str]]:
    """The entailment judge: X_AND_Y follows only from texts that give both X and Y."""
    if claim != X_AND_Y:
        return []
    found = {s: i for i, t in enumerate(texts) for s in (X, Y) if s.rstrip(".") in t}
    return [(found[X], X), (found[Y], Y)] if len(found) == 2 else []


def test_two_specialists_stating_one_part_do_not_recombine_into_the_whole_claim(
    store: SQLiteStore, tmp_path: Path
) -> None:
    _, _, fake = run(store, tmp_path, debate(BOTH_X, X_AND_Y, x_only, needs_both), **SMALL)
    made = claims(store)[X_AND_Y]
    assert made.origin.value != "recombined"
    assert made.origin.value == "unsupported", made.reason
    assert "together they do not support all of it" in made.reason
    # the parts' sentences were checked against the whole claim, Y included, in one call
    [together] = [c for c in fake.calls if c.meta.agent == "ledger-recombination"]
    assert f"The claim to check: {X_AND_Y}" in together.prompt and X in together.prompt
    assert "Text 0" not in together.prompt  # the parts alone, not the passage
    # then, supported only in part, traced like any claim no text states
    assert [c for c in fake.calls if c.meta.agent == "ledger-entailment" and X_AND_Y in c.prompt]
    assert {e.props["verdict"] for e in edges_of(store, made, EdgeType.DERIVES_FROM)} <= {"partial"}
    assert check_store(store, "s1") == []


def test_parts_that_together_support_the_claim_recombine(store: SQLiteStore, tmp_path: Path) -> None:
    said = {
        ("L1N1", "respond", 1): BOTH_X[("L1N1", "respond", 1)],
        ("L1N2", "respond", 1): f"{Y} Clinics near the ring road report it.",
    }

    def parts(claim: str, text: str) -> tuple[str, str]:
        if claim == X_AND_Y and Y.rstrip(".") in text:
            return "partial", Y
        return x_only(claim, text)

    _, _, fake = run(store, tmp_path, debate(said, X_AND_Y, parts, needs_both), **SMALL)
    made = claims(store)[X_AND_Y]
    assert made.origin.value == "recombined", made.reason
    assert made.agents == ["analytical", "creative"] and "together support all of it" in made.reason
    assert len([c for c in fake.calls if c.meta.agent == "ledger-recombination"]) == 1
    assert not [c for c in fake.calls if c.meta.agent == "ledger-entailment"]
    assert check_store(store, "s1") == []


ROOT_ONLY = "Stockholm's referendum shows that a charge survives once voters have lived with it."
STOCKHOLM = "Stockholm kept its charge after a vote."


def test_a_claim_only_the_root_states_is_the_integrators(store: SQLiteStore, tmp_path: Path) -> None:
    """The root's observation states it and one specialist's sentence supports it: the
    claim is the integrator's, neither a single specialist's nor emergent."""
    said = {**SAID, ("L0N1", "observe", 2): f"{ROOT_ONLY} The two answers still disagree on fairness."}

    def states(claim: str, text: str) -> tuple[str, str]:
        return ("states", claim) if claim.rstrip(".") in text else ("unrelated", "")

    def one_specialist(claim: str, texts: list[str]) -> list[tuple[int, str]]:
        return [(i, STOCKHOLM) for i, t in enumerate(texts) if i and STOCKHOLM in t][:1]

    _, _, fake = run(store, tmp_path, debate(said, ROOT_ONLY, states, one_specialist), **SMALL)
    made = claims(store)[ROOT_ONLY]
    assert made.origin.value == "integrator", made.reason
    assert made.agents == ["L0N1"] and not made.first_stated_at
    assert "states it, but no specialist did" in made.reason
    # the entailment check read the other texts, not the root's that states it
    [check] = [c for c in fake.calls if c.meta.agent == "ledger-entailment"]
    assert "s1/main/r2/L0N1/observe" not in {e.target for e in edges_of(store, made, EdgeType.DERIVES_FROM)
                                             if e.props["verdict"] == "supports"}  # fmt: skip
    assert check.prompt.count(ROOT_ONLY) == 1  # the claim itself, no text that states it
    shares = arm_shares(store, "s1")
    assert shares is not None and (shares.integrator, shares.single, shares.emergent) == (1.0, 0.0, 0.0)
    m = session_metrics(store, "s1", HashingEmbedder())
    assert m.ledger is not None and m.ledger.final == shares
    assert "100% integrator (only a coordinator's or the root's text states it)" in claims_row(shares)
    assert check_store(store, "s1") == []


def test_a_claim_a_coordinator_names_from_two_specialists_is_still_emergent(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """A coordinator's job is to name what emerges: when the root states a claim that
    two specialists' points together support, it is emergent, not the integrator's."""
    said = {**SAID, ("L0N1", "observe", 2): f"{DRAWN} The two answers still disagree on fairness."}

    def states(claim: str, text: str) -> tuple[str, str]:
        return ("states", claim) if claim.rstrip(".") in text else ("unrelated", "")

    def from_b_and_c(claim: str, texts: list[str]) -> list[tuple[int, str]]:
        return [(i, s) for i, t in enumerate(texts) for s in (B, C) if i and s in t]

    run(store, tmp_path, debate(said, DRAWN, states, from_b_and_c), **SMALL)
    made = claims(store)[DRAWN]
    assert made.origin.value == "emergent", made.reason
    assert made.agents == ["analytical", "creative"]
    assert check_store(store, "s1") == []


ROOT_POINT = "The two answers disagree on fairness."
WITH_ROOT = "The answers disagree on fairness, so revenue should fund night buses for early-shift workers."


def test_the_roots_text_and_one_specialists_do_not_make_a_claim_emergent(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """It follows from the root's observation and L1N1's point: two agents, one of them
    a specialist. Only specialists count, so the claim is inferred."""

    def root_and_one(claim: str, texts: list[str]) -> list[tuple[int, str]]:
        if claim != WITH_ROOT:
            return []
        return [(i, s) for i, t in enumerate(texts) for s in (ROOT_POINT, B) if i and s in t]

    def nothing_states(claim: str, text: str) -> tuple[str, str]:
        return "unrelated", ""

    run(store, tmp_path, debate(SAID, WITH_ROOT, nothing_states, root_and_one), **SMALL)
    made = claims(store)[WITH_ROOT]
    derives = edges_of(store, made, EdgeType.DERIVES_FROM)
    supports = {e.target for e in derives if e.props["verdict"] == "supports"}
    assert "s1/main/r1/L0N1/observe" in supports and any("/L1N1/" in s for s in supports)
    assert made.origin.value == "inferred", made.reason
    assert made.agents == ["analytical"]
    assert check_store(store, "s1") == []


def test_a_lone_agents_answer_is_a_specialists(store: SQLiteStore, tmp_path: Path) -> None:
    """A tree of one agent: its root answers the passage, so a claim it states is single."""
    said = {("L0N1", "respond", 1): f"{X} Drivers shift to the shoulder hours."}

    def states(claim: str, text: str) -> tuple[str, str]:
        return ("states", claim) if claim.rstrip(".") in text else ("unrelated", "")

    settings: dict[str, Any] = {**SMALL, "depth": 1, "rounds": 1}
    run(store, tmp_path, debate(said, X, states), **settings)
    made = claims(store)[X]
    assert made.origin.value == "single" and made.first_stated_at == "s1/main/r1/L0N1/respond"
    assert check_store(store, "s1") == []
