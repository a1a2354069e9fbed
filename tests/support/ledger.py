"""Sessions whose turns say known sentences and whose final answer joins, copies, reverses
or invents them, to check the claim ledger's tracing; the claims and edges stored."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagmca.config import SessionConfig
from dagmca.graph import CallPhase, ClaimNode, EdgeRecord, EdgeType, node_from_record
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_structured
from dagmca.similarity import Embedder, HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import SessionMode, run_and_report
from tests.support.judges import EntailRule, ledger_reply, sentences_of
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE

# a main debate only, two leaves under the root, two rounds, no observers
SMALL: dict[str, Any] = dict(cpp=2, depth=2, rounds=2, max_depth=0, monitor_every="off", ledger="final")

A = "Congestion charges cut traffic because each driver pays for the delay imposed on others."

B = "Revenue from the charge should fund night buses for early-shift workers."

C = "A flat charge takes a larger share of a cleaner's wage than of a lawyer's."

TURN_CLAIM = "Congestion charges raise traffic in the charged zone within the first year."

SAID = {  # (agent, phase, round) -> what it says; the rest say nothing to trace
    ("L1N1", "respond", 1): f"{B} Exemptions for carers are hard to police.",
    ("L1N2", "respond", 1): f"{C} {TURN_CLAIM}",
    ("L1N1", "lateral", 1): f"{A} {B}",
    ("L0N1", "observe", 1): f"{A} The two answers disagree on fairness.",
    ("L1N2", "respond", 2): f"{A} Stockholm kept its charge after a vote.",
}

JOINED = (  # one leaf's point and the other's, joined
    "Funding night buses from the charge answers the objection that a flat charge takes a larger "
    "share of a cleaner's wage."
)

PARTS = {JOINED: (B, C)}


def judge_rule(paraphrases: dict[str, str] | None = None) -> Rule:
    """A judge that reads the texts: states when the text has the claim (or, given, the
    sentence the claim paraphrases) word for word; partial when it has one of the
    claim's parts; otherwise unrelated, however many words they share."""

    def rule(claim: str, text: str) -> tuple[str, str]:
        source = (paraphrases or {}).get(claim, claim)
        if source.rstrip(".") in text:
            return "states", source
        for part in PARTS.get(claim, ()):
            if part in text:
                return "partial", part
        return "unrelated", ""

    return rule


Rule = Callable[[str, str], tuple[str, str]]


def recombines(claim: str, texts: list[str]) -> list[tuple[int, str]]:
    """An entailment judge for which a claim of PARTS follows from the texts that hold
    every one of its parts (each part's sentence, from the first text that has it), and
    nothing else follows."""
    found = []
    for part in PARTS.get(claim, ()):
        where = next((i for i, t in enumerate(texts) if i and part.rstrip(".") in t), None)
        if where is None:
            return []
        found.append((where, part))
    return found


def debate(
    said: dict[tuple[str, str, int], str], final: str, rule: Rule, entail: EntailRule = recombines
) -> Any:
    """A scripted session: each agent's turns as `said` (by agent, phase and round: the
    n-th call of an agent's phase is its round n), the final answer `final`, the ledger's
    judge by `rule` and its entailment checks by `entail`."""
    seen: Counter[tuple[str, str]] = Counter()

    def respond(call: ScriptedCall) -> Any:
        traced = ledger_reply(call, sentences_of, rule, entail)
        if traced is not None:
            return traced
        if call.schema is not None:
            return default_structured(call.schema, call.prompt)
        if call.meta.phase == CallPhase.FINAL:
            return final
        key = (call.meta.agent, call.meta.phase)
        seen[key] += 1
        text = said.get((*key, seen[key]))
        return text or f"{call.meta.agent} in {call.meta.phase} of round {seen[key]} has nothing to add."

    return respond


def run(
    store: SQLiteStore,
    tmp_path: Path,
    responder: Any,
    *,
    embedder: Embedder | None = None,
    mode: SessionMode = SessionMode.NEW,
    session: str = "s1",
    **settings: Any,
) -> tuple[Any, Any, ScriptedLLM]:
    """A whole session on the scripted fake, as the CLI wires it, with `embedder` (the
    hashing one by default) and, for a resumed run, `mode`."""
    cfg = SessionConfig(**{"llm": "fake", "cache": False, "agent_memory": "session", **settings})
    fake = ScriptedLLM(responder)

    async def go() -> tuple[Any, Any]:
        async with open_state(
            cfg, store, client=fake, session_id=session, passage=PASSAGE,
            embedder=embedder or HashingEmbedder(), mode=mode,
        ) as state:  # fmt: skip
            result = await run_and_report(state, title="test", model="scripted", out_dir=tmp_path / session)
        return result, state

    result, state = asyncio.run(go())
    return result, state, fake


def claims(store: SQLiteStore, session: str = "s1") -> dict[str, ClaimNode]:
    """The session's claims, by their text."""
    found = [node_from_record(r) for r in store.nodes(session)]
    return {n.text: n for n in found if isinstance(n, ClaimNode)}


def edges_of(store: SQLiteStore, claim: ClaimNode, type_: EdgeType) -> list[EdgeRecord]:
    return [e for e in store.edges(claim.session, type_) if e.source == claim.id]


FROM_PASSAGE = "Congestion is a cost each driver imposes on others."  # the passage's own sentence

DRAWN = "Night buses paid for by the charge would offset what a flat charge takes from a cleaner's wage."

INFERRED = "Each driver in a jam slows down the other drivers around them."

REPEATS = {**SAID, ("L1N1", "respond", 2): f"{FROM_PASSAGE} So the charge prices a real cost."}


def entail_rule(claim: str, texts: list[str]) -> list[tuple[int, str]]:
    """DRAWN follows from B (L1N1's) and C (L1N2's) together; INFERRED from the passage's
    second sentence alone; nothing else follows."""
    if claim == DRAWN:
        return [(i, s) for i, t in enumerate(texts) for s in (B, C) if i and s in t]
    if claim == INFERRED and FROM_PASSAGE.rstrip(".") in texts[0]:
        return [(0, FROM_PASSAGE)]
    return []


def integrating(final: str) -> Any:
    """The scripted debate of tests/test_ledger.py (one agent repeating the passage's
    sentence), an integrator writing `final`, and the entailment judge of `entail_rule`."""
    responder = debate(REPEATS, final, judge_rule())

    def respond(call: ScriptedCall) -> Any:
        traced = ledger_reply(call, sentences_of, judge_rule(), entail_rule)
        return traced if traced is not None else responder(call)

    return respond
