"""One claim traced: the judge's verdicts on its candidate texts, its origin by the
rules of origin.py (and the recombination and entailment checks they call for), and
the Claim node that records it, written by the trace or, for a control, only read."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from dagmca.debate.ledger.entail import RECOMBINATION, entail
from dagmca.debate.ledger.origin import Lineage, decide, parts, recombined, settle, unstated
from dagmca.debate.ledger.prefilter import Candidate
from dagmca.debate.ledger.texts import Said
from dagmca.debate.ledger.verdicts import Verdict, judge
from dagmca.debate.state import SessionState
from dagmca.graph import ClaimCheck, ClaimNode
from dagmca.prompts.templates import Frame


@dataclass(frozen=True)
class Traced:
    lineage: Lineage
    verdicts: list[Verdict]  # the judge's, then the entailment check's `supports`
    hollow: bool  # a recombination or entailment check's reason said nothing


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def claim_id(target: Said, digest: str, number: int) -> str:
    return f"{target.node}/claim/{digest[:8]}-{number}"


async def lineage(
    state: SessionState,
    frame: Frame,
    claim: str,
    picked: list[Candidate],
    whole: Candidate | None,
    node: str,
) -> Traced | None:
    """`claim`'s origin against `picked` (the prefilter's candidates) and `whole` (the
    passage as a candidate); None when a call it needs could not be made (the budget,
    or a failed call): the claim is left untraced. `node`: the traced text's, which the
    calls are recorded under."""
    cfg = state.handles.config
    judged = whole if whole is not None and whole.similarity >= cfg.ledger_prefilter else None
    verdicts = await judge(state, frame, claim, picked, node, judged)
    if verdicts is None:
        return None
    found = decide(verdicts)
    hollow = False
    recombination = ""  # why the parts two specialists state do not recombine into it
    stated = parts(verdicts)
    if found is None and stated:
        together = await entail(state, frame, claim, stated, None, node, RECOMBINATION)
        if together is None:
            return None
        found, recombination = recombined(verdicts, together)
        hollow = together.degenerate
    if found is None:
        checked = await entail(state, frame, claim, unstated(picked, verdicts), whole, node)
        if checked is None:
            return None
        found = settle(verdicts, checked, cfg.ledger_prefilter, recombination)
        verdicts = [*verdicts, *checked.support]
        hollow = hollow or checked.degenerate
    return Traced(found, verdicts, hollow)


def claim_node(
    state: SessionState, target: Said, digest: str, number: int, of: int, text: str, traced: Traced
) -> ClaimNode:
    """The Claim node of a traced claim: its origin, where it first appears, who
    originates it, and every text the judge read against it."""
    lineage, earliest = traced.lineage, traced.lineage.earliest
    return ClaimNode(
        id=claim_id(target, digest, number),
        session=state.handles.session_id,
        text=text,
        origin=lineage.origin,
        reason=lineage.reason,
        method=lineage.method,
        stated_in=target.node,
        source_sha256=digest,
        number=number,
        of=of,
        first_stated_at=lineage.first.node if lineage.first is not None else "",
        first_debate=earliest.debate if earliest is not None else "",
        first_round=earliest.round if earliest is not None else None,
        agents=list(lineage.agents),
        perspectives=list(lineage.perspectives),
        checks=[
            ClaimCheck(
                node=s.node,
                similarity=v.candidate.similarity,
                verdict=v.verdict,
                sentence=v.sentence,
                reason=v.reason,
                method=v.method,
                degenerate=v.degenerate,
            )
            for v in traced.verdicts
            for s in v.candidate.texts
        ],
        degenerate_check=traced.hollow,
    )
