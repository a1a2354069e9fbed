"""The ledger's control: a lone agent's final answer traced against a debate's passage
and turns, which it never read, by the same procedure as the debate's own final. What
comes out `single`, `recombined` or `emergent` there is what the procedure credits by
chance; nothing is written but the calls, recorded under the lone agent's session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dagmca.debate.ledger import ControlTrace
from dagmca.errors import UserError
from dagmca.graph import CallPhase, ClaimNode, NodeKind, node_from_record
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace import BaseWorkspace, control_ledger
from tests.support.ledger import JOINED, SAID, SMALL, A, debate, judge_rule, run

FINAL = f"{A} {JOINED}"  # the debate's final
UNSAID = "Cities should pilot the charge for a year before holding a binding referendum."
LONE = f"{A} {JOINED} {UNSAID}"  # the lone agent's answer: what the debate's agents said, and more
ALONE = {("L0N1", "respond", 1): "Parking fees in the centre could be raised instead of a charge."}


def _claims(store: SQLiteStore, session: str) -> list[ClaimNode]:
    return [n for n in map(node_from_record, store.nodes(session)) if isinstance(n, ClaimNode)]


@pytest.mark.slow  # two sessions and the control
def test_a_lone_agents_answer_is_traced_against_the_debates_sources(
    store: SQLiteStore, tmp_path: Path
) -> None:
    run(store, tmp_path, debate(SAID, FINAL, judge_rule()), **SMALL)  # the debate, traced
    lone = {**SMALL, "depth": 1, "rounds": 1, "strange_loops": 0}
    run(store, tmp_path, debate(ALONE, LONE, judge_rule()), session="s2", **lone)
    own = {c.text: c.origin.value for c in _claims(store, "s2")}
    assert own == {A: "unsupported", JOINED: "unsupported", UNSAID: "unsupported"}  # against its own turn
    written = len(store.nodes("s2")), len(store.edges("s2")), len(_claims(store, "s1"))
    fake = ScriptedLLM(debate({}, "", judge_rule()))

    async def control() -> ControlTrace:
        async with BaseWorkspace(store, embedder=HashingEmbedder()) as ws:
            return await control_ledger(ws, "s2", "s1", client=fake)

    traced = asyncio.run(control())
    by_text = {c.text: c for c in traced.claims}
    # against the debate's turns: L1N1 stated A, and two specialists' parts make JOINED
    assert by_text[A].origin.value == "single" and by_text[A].first_stated_at == "s1/main/r1/L1N1/lateral"
    joined = by_text[JOINED]
    assert joined.origin.value == "recombined" and joined.agents == ["analytical", "creative"]
    assert by_text[UNSAID].origin.value == "unsupported"
    shares = traced.shares
    assert shares is not None and (shares.claims, shares.untraced) == (3, 0)
    assert (shares.single, shares.recombined, shares.unsupported) == (0.3333, 0.3333, 0.3333)
    # nothing written but the calls: no claim, no edge, the debate's ledger untouched
    assert (len(store.nodes("s2")), len(store.edges("s2")), len(_claims(store, "s1"))) == written
    made = [c for c in store.calls("s2") if c.debate == "s2/control/s1"]
    assert made and {c.phase for c in made} == {CallPhase.LEDGER}
    assert all(c.meta.phase == CallPhase.LEDGER for c in fake.calls)
    head, spent = store.get_node("s2"), [c for c in store.calls("s2") if not c.cache_hit]
    assert head is not None and head.props["llm_calls"] == len(spent)  # the session's totals count them
    assert check_store(store, "s1") == [] and check_store(store, "s2") == []


def test_a_control_needs_a_final_and_a_debate_to_trace_against(store: SQLiteStore, tmp_path: Path) -> None:
    lone = {**SMALL, "depth": 1, "rounds": 1, "strange_loops": 0}
    run(store, tmp_path, debate(ALONE, LONE, judge_rule()), session="s2", **lone)

    async def control(against: str) -> None:
        async with BaseWorkspace(store, embedder=HashingEmbedder()) as ws:
            await control_ledger(ws, "s2", against, client=ScriptedLLM(debate({}, "", judge_rule())))

    with pytest.raises(UserError, match="no session"):
        asyncio.run(control("missing"))
    assert not [n for n in store.nodes("s2") if n.kind is NodeKind.CLAIM and "/control/" in n.id]
