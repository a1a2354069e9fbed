import json

import pytest
from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.graph import (
    STRUCTURAL_EDGES,
    EdgeType,
    NodeKind,
    RevisitCheck,
    TensionCategory,
    TensionNode,
    TensionStatus,
)


def test_kinds_and_edge_types_are_exactly_the_design_schema() -> None:
    assert {k.value for k in NodeKind} == {
        "Session",
        "Debate",
        "Round",
        "Turn",
        "Agent",
        "Tension",
        "Synthesis",
        "Final",
        # a long passage's sections, and the parts of a hierarchical integration
        "Section",
        "Integration",
        # the agents that persist across sessions
        "Persona",
        # the emergence ledger's claims
        "Claim",
        # an evaluation's record
        "Evaluation",
        # a judge's check, that an eval of that judge reads
        "JudgeCheck",
        # a swarm, its stream's tasks and its snapshots of S, D and F
        "Swarm",
        "Task",
        "Snapshot",
        # what recurs across samples of one passage
        "Finding",
    }
    assert {t.value for t in EdgeType} == {
        "BRANCHES_FROM",
        "EXPLORES",
        "MERGES_INTO",
        "SUPERSEDES",
        "REFERENCES",
        "CONTRADICTS",
        "ELABORATES",
        "HAS_ROUND",
        "NEXT",
        "IN_ROUND",
        "BY",
        "REVISES",
        "OBSERVES",
        "FLAGGED_AT",
        "READS",
        "INTEGRATES",
        "IN_SESSION",
        "CHECKED_AGAINST",  # a stub's revisit checks, one relationship each
        "PLAYS",  # a session's seat, played by a persistent agent
        "DUPLICATES",  # a stub judged to ask what an earlier one asks
        # the emergence ledger: a claim's text, the turn that first stated it, its sources
        "STATED_IN",
        "FIRST_STATED_AT",
        "DERIVES_FROM",
        # an evaluation: the sessions it ran, and the judge's verdicts between finals
        "RAN",
        "JUDGED_AGAINST",
        "ATTEMPTED",
        # a finding across samples: the sessions it is seen in, its member in each, and
        # every pair of two sessions' members judged
        "SEEN_IN",
        "AS",
        "COMPARED_WITH",
    }
    assert {t.value for t in STRUCTURAL_EDGES} == {"BRANCHES_FROM", "EXPLORES", "MERGES_INTO", "SUPERSEDES"}


def _tension(**kw: object) -> TensionNode:
    base = dict(
        id="t1",
        session="s",
        debate="d",
        question="q?",
        urgency=0.5,
        rationale="r",
        excerpt="e",
        observer="skeptical",
        category=TensionCategory.GAP,
    )
    base.update(kw)
    return TensionNode(**base)  # type: ignore[arg-type]


def test_models_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        _tension(colour="red")
    with pytest.raises(ValidationError):
        SessionConfig(cpp=3, flavour="x")  # type: ignore[call-arg]


def test_stub_label_follows_status_and_rich_values_become_json() -> None:
    t = _tension(revisit_checks=[RevisitCheck(after="n1", similarity=0.4, outcome="open")])
    rec = t.to_record()
    assert rec.kind is NodeKind.TENSION and rec.labels == ("Stub",)
    assert json.loads(str(rec.props["revisit_checks"]))[0]["after"] == "n1"
    t.status = TensionStatus.EXPLORED
    assert t.to_record().labels == ()


def test_config_defaults_and_bounds() -> None:
    cfg = SessionConfig(llm="openai")
    assert (cfg.cpp, cfg.depth, cfg.rounds, cfg.max_branches) == (3, 2, 2, 3)
    assert cfg.urgency_threshold == 0.3 and cfg.merge_threshold == 0.7
    assert cfg.convergence == "embedding" and cfg.convergence_threshold == 0.73
    assert cfg.max_passage_bytes == 200_000
    assert cfg.per_round_calls() == 8
    for bad in ({"cpp": 0}, {"rounds": 0}, {"urgency_threshold": 1.5}, {"strategy": "loud"}):
        with pytest.raises(ValidationError):
            SessionConfig(**bad)  # type: ignore[arg-type]


def test_the_local_model_has_its_own_defaults_and_a_given_value_wins() -> None:
    local, endpoint = SessionConfig(), SessionConfig(llm="openai")
    assert (local.cpp, local.rounds, local.signals, local.strange_loops) == (2, 1, False, 0)
    assert (local.max_branches, local.max_revisits, local.max_stub_checks) == (1, 0, 3)
    assert (endpoint.cpp, endpoint.rounds, endpoint.signals, endpoint.strange_loops) == (3, 2, True, 1)
    assert (endpoint.max_branches, endpoint.max_revisits, endpoint.max_stub_checks) == (3, 1, 8)
    assert (local.turn_tokens(), endpoint.turn_tokens()) == (64, 600)
    given = SessionConfig(rounds=3, max_branches=4)
    assert (given.rounds, given.max_branches, given.max_stub_checks) == (3, 4, 3)
    # a stored session keeps what it ran with, whichever defaults came later
    assert SessionConfig.model_validate_json(given.model_dump_json()) == given
