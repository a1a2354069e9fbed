"""A claim's origin, from the judge's verdicts on its candidate texts and, for a claim
no text states, the entailment check.

Stated (`decide`), by the judge's verdicts on the passage and the agents' turns:
- passage: the passage states the claim. The debate did not add it, whoever repeated it;
- single: some turn states it (the passage does not); the earliest such turn, by debate,
  round and phase, is where it was first stated;
- recombined: no turn states it, but turns by two or more agents state its parts, and
  the passage states none of them (a part the passage states sends the claim to the
  entailment check).

Not stated (`settle`): no turn or passage sentence states the claim, nor do two agents'
turns state its parts. One entailment check asks whether it follows from the passage
and the texts the prefilter picked, and which sentences it follows from:
- emergent: it follows, turns by two or more agents are among what it follows from, and
  the passage is not (nor does it state a part of the claim): the agents' points together
  give a claim that none of them stated (a synthesis or a resolution may state it, but no
  agent did);
- inferred: it follows, from the passage (in whole or in part), one agent's turns, or the
  syntheses and resolutions alone: a step the writer took from named sources, not the
  meeting of two agents' points;
- unsupported: it does not follow (or the sentences it was said to follow from are not
  in the texts): an invention, never counted as emergence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.debate.ledger.entail import Entailment
from dagmca.debate.ledger.texts import Said
from dagmca.debate.ledger.verdicts import Verdict, is_passage
from dagmca.graph import ClaimOrigin, DecisionMethod, LedgerVerdict


@dataclass(frozen=True)
class Lineage:
    origin: ClaimOrigin
    reason: str
    method: DecisionMethod
    first: Said | None = None  # the earliest turn that states it
    # where it first appears: the earliest turn that states it, or one of its parts, or
    # (emergent) one of the turns it follows from
    earliest: Said | None = None
    agents: tuple[str, ...] = ()  # who originates it
    perspectives: tuple[str, ...] = ()


def _turns(verdicts: Sequence[Verdict], verdict: LedgerVerdict) -> list[Said]:
    return [s for v in verdicts if v.verdict is verdict for s in v.candidate.texts if s.is_turn]


def _names(turns: Sequence[Said]) -> str:
    return ", ".join(sorted({t.who for t in turns}))


def _where(turn: Said) -> str:
    return f"{turn.agent} ({turn.perspective}), round {turn.round}, {turn.node}"


def decide(verdicts: Sequence[Verdict]) -> Lineage | None:
    """The origin of a claim that the passage or the turns state (in whole, or in parts
    by two agents); None when none does: the entailment check decides (`settle`)."""
    passage = [v for v in verdicts if is_passage(v.candidate) and v.verdict is LedgerVerdict.STATES]
    stating = _turns(verdicts, LedgerVerdict.STATES)
    if passage:
        also = f"; {len({t.node for t in stating})} turn(s) repeat it" if stating else ""
        return Lineage(
            ClaimOrigin.PASSAGE, f"the passage states it: '{passage[0].sentence}'{also}", DecisionMethod.LLM
        )
    parts = _turns(verdicts, LedgerVerdict.PARTIAL)
    if stating:
        first = min(stating, key=lambda t: t.rank)
        others = len({t.node for t in stating}) - 1
        also = f"; {others} later turn{'s' if others != 1 else ''} state it too" if others else ""
        return Lineage(
            ClaimOrigin.SINGLE,
            f"first stated by {_where(first)}{also}",
            DecisionMethod.LLM,
            first,
            first,
            (first.who,),
            (first.perspective,),
        )
    who = sorted({t.who for t in parts})
    if _passage_part(verdicts) is not None:
        # the passage states a part: what the claim adds to it is for the entailment check
        # (inferred or unsupported), not the agents' recombination
        return None
    if len(who) >= 2:
        earliest = min(parts, key=lambda t: t.rank)
        perspectives = tuple(sorted({t.perspective for t in parts}))
        return Lineage(
            ClaimOrigin.RECOMBINED,
            f"no turn states it whole; turns by {len(who)} agents state its parts ({', '.join(who)})",
            DecisionMethod.LLM,
            None,
            earliest,
            tuple(who),
            perspectives,
        )
    return None


def _passage_part(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The passage's verdict when it states a part of the claim."""
    return next((v for v in verdicts if is_passage(v.candidate) and v.verdict is LedgerVerdict.PARTIAL), None)


def _unstated(verdicts: Sequence[Verdict], threshold: float) -> list[str]:
    """Why a claim counts as stated by no text."""
    if not verdicts:
        return [f"no earlier text comes within cosine {threshold} of it (the prefilter), so none states it"]
    why = ["no turn or passage sentence states it"]
    parts = _turns(verdicts, LedgerVerdict.PARTIAL)
    if parts:
        why.append(f"only {_names(parts)} states a part of it")
    if _passage_part(verdicts) is not None:
        why.append("the passage states a part of it")
    derived = [
        s
        for v in verdicts
        if v.verdict is LedgerVerdict.STATES and not is_passage(v.candidate)
        for s in v.candidate.texts
    ]
    if derived:
        why.append(f"{derived[0].label} ({derived[0].node}) states it, but no agent did")
    return why


def settle(verdicts: Sequence[Verdict], entailment: Entailment, threshold: float) -> Lineage:
    """The origin of a claim that no text states, by its entailment check."""
    why = _unstated(verdicts, threshold)
    if not entailment.follows:
        why.append(f"it does not follow from the sources: {entailment.reason}")
        return Lineage(ClaimOrigin.UNSUPPORTED, "; ".join(why), entailment.method)
    turns = [s for v in entailment.support for s in v.candidate.texts if s.is_turn]
    who = sorted({t.who for t in turns})
    named = ", ".join(
        "the passage" if is_passage(v.candidate) else v.candidate.first.node for v in entailment.support
    )
    why.append(f"it follows from {named}: {entailment.reason}")
    earliest = min(turns, key=lambda t: t.rank) if turns else None
    perspectives = tuple(sorted({t.perspective for t in turns}))
    # a claim the passage supports (a sentence it follows from, or a part the passage
    # states) is the passage's, extended: never the agents' emergence
    from_passage = any(is_passage(v.candidate) for v in entailment.support) or _passage_part(verdicts)
    origin = ClaimOrigin.EMERGENT if len(who) >= 2 and not from_passage else ClaimOrigin.INFERRED
    return Lineage(origin, "; ".join(why), DecisionMethod.LLM, None, earliest, tuple(who), perspectives)
