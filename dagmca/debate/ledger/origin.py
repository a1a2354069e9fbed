"""A claim's origin, from the judge's verdicts on its candidate texts and, for a claim
no specialist states, the entailment checks.

Only specialists' turns (the agents that answer the passage) count toward single,
recombined and emergent. A coordinator's or the root's turn, a debate's resolution and
a synthesis are integrating texts: a claim that only they state is the integrator's.

Stated (`decide`), by the judge's verdicts on the passage and the turns:
- passage: the passage states the claim. The debate did not add it, whoever repeated it;
- single: a specialist's turn states it (the passage does not); the earliest such turn,
  by debate, round and phase, is where it was first stated.

Stated in parts (`parts`, then `recombined`): no specialist states it whole, but turns
by two or more specialists state its parts, and the passage states none of them. One
entailment check over the sentences that state the parts (recombination) asks whether
together they support the whole claim:
- recombined: they do, and the sentences it names come from two or more specialists;
- otherwise (they support it only in part) it is traced as below.

Not stated (`settle`): one entailment check asks whether the claim follows from the
passage and the texts the prefilter picked (those that state it whole left out: a claim
follows from itself), and which sentences it follows from:
- emergent: it follows, turns by two or more specialists are among what it follows from,
  and the passage is not (nor does it state a part of the claim): the specialists'
  points together give a claim that none of them stated (an integrating text may state
  it: a coordinator names what emerges, it does not invent it);
- integrator: not emergent, and an integrating text states it: the claim is the
  integrator's or a coordinator's own, whether or not it follows;
- inferred: it follows, from the passage (in whole or in part), one specialist's turns,
  or integrating texts: a step the writer took from named sources, not the meeting of
  two specialists' points;
- unsupported: it does not follow (or the sentences it was said to follow from are not
  in the texts): an invention, never counted as emergence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dagmca.debate.ledger.entail import Entailment
from dagmca.debate.ledger.prefilter import Candidate
from dagmca.debate.ledger.texts import Said
from dagmca.debate.ledger.verdicts import Verdict, is_passage
from dagmca.graph import ClaimOrigin, DecisionMethod, LedgerVerdict


@dataclass(frozen=True)
class Lineage:
    origin: ClaimOrigin
    reason: str
    method: DecisionMethod
    first: Said | None = None  # the earliest specialist's turn that states it
    # where it first appears: the earliest turn that states it, or one of its parts, or
    # (emergent, inferred) one of the turns it follows from
    earliest: Said | None = None
    agents: tuple[str, ...] = ()  # who originates it
    perspectives: tuple[str, ...] = ()


def _specialists(verdicts: Sequence[Verdict], verdict: LedgerVerdict) -> list[Said]:
    """The specialists' turns given `verdict`."""
    return [s for v in verdicts if v.verdict is verdict for s in v.candidate.texts if s.specialist]


def _integrating(verdicts: Sequence[Verdict]) -> list[Said]:
    """The integrating texts (coordinators' and the root's turns, resolutions,
    syntheses) that state the claim whole."""
    return [
        s for v in verdicts if v.verdict is LedgerVerdict.STATES for s in v.candidate.texts if s.integrating
    ]


def _names(texts: Sequence[Said]) -> str:
    return ", ".join(sorted({t.who or t.label for t in texts}))


def _where(turn: Said) -> str:
    return f"{turn.agent} ({turn.perspective}), round {turn.round}, {turn.node}"


def decide(verdicts: Sequence[Verdict]) -> Lineage | None:
    """The origin of a claim that the passage or a specialist's turn states; None when
    none does (`parts`, `recombined` and `settle` decide)."""
    passage = [v for v in verdicts if is_passage(v.candidate) and v.verdict is LedgerVerdict.STATES]
    stating = _specialists(verdicts, LedgerVerdict.STATES)
    if passage:
        turns = {s.node for v in verdicts if v.verdict is LedgerVerdict.STATES for s in v.candidate.texts}
        turns.discard(passage[0].candidate.first.node)
        also = f"; {len(turns)} text(s) repeat it" if turns else ""
        return Lineage(
            ClaimOrigin.PASSAGE, f"the passage states it: '{passage[0].sentence}'{also}", DecisionMethod.LLM
        )
    if not stating:
        return None
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


def parts(verdicts: Sequence[Verdict]) -> list[Candidate]:
    """What the recombination check reads: for a claim whose parts turns by two or more
    specialists state (and the passage states none), each such verdict's quoted sentence
    as the text of its turns; empty otherwise."""
    if _passage_part(verdicts) is not None:
        # the passage states a part: what the claim adds to it is for the entailment check
        # (inferred or unsupported), not the specialists' recombination
        return []
    stating = [
        v
        for v in verdicts
        if v.verdict is LedgerVerdict.PARTIAL and any(t.specialist for t in v.candidate.texts)
    ]
    if len({t.who for v in stating for t in v.candidate.texts if t.specialist}) < 2:
        return []
    return [
        Candidate(tuple(replace(t, text=v.sentence) for t in v.candidate.texts), v.candidate.similarity)
        for v in stating
    ]


def recombined(verdicts: Sequence[Verdict], check: Entailment) -> tuple[Lineage | None, str]:
    """The origin of a claim whose parts two or more specialists state, by the
    recombination check over those parts' sentences: recombined when they support all of
    it and the sentences named come from two or more specialists; otherwise None, and
    why (the claim is then traced as one no text states)."""
    who = sorted({t.who for t in _specialists(verdicts, LedgerVerdict.PARTIAL)})
    named = f"turns by {len(who)} specialists state its parts ({', '.join(who)})"
    if not check.follows:
        return None, f"{named}, but together they do not support all of it: {check.reason}"
    used = [t for v in check.support for t in v.candidate.texts if t.specialist]
    by = sorted({t.who for t in used})
    if len(by) < 2:
        return None, f"{named}, but what supports all of it is {', '.join(by) or 'no'} specialist's alone"
    earliest = min(used, key=lambda t: t.rank)
    lineage = Lineage(
        ClaimOrigin.RECOMBINED,
        f"no specialist's turn states it whole; {named}, which together support all of it: {check.reason}",
        check.method,
        None,
        earliest,
        tuple(by),
        tuple(sorted({t.perspective for t in used})),
    )
    return lineage, ""


def unstated(candidates: Sequence[Candidate], verdicts: Sequence[Verdict]) -> list[Candidate]:
    """The candidates an entailment check reads: those that do not state the claim whole
    (a claim follows from a text that states it; the question is whether it follows from
    the others)."""
    stating = {v.candidate.first.node for v in verdicts if v.verdict is LedgerVerdict.STATES}
    return [c for c in candidates if c.first.node not in stating]


def _passage_part(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The passage's verdict when it states a part of the claim."""
    return next((v for v in verdicts if is_passage(v.candidate) and v.verdict is LedgerVerdict.PARTIAL), None)


def _unstated(verdicts: Sequence[Verdict], threshold: float) -> list[str]:
    """Why a claim counts as stated by no specialist nor the passage."""
    if not verdicts:
        return [f"no earlier text comes within cosine {threshold} of it (the prefilter), so none states it"]
    why = ["no specialist's turn or passage sentence states it"]
    part = _specialists(verdicts, LedgerVerdict.PARTIAL)
    if part:
        why.append(f"{_names(part)} state{'s' if len({t.who for t in part}) == 1 else ''} a part of it")
    if _passage_part(verdicts) is not None:
        why.append("the passage states a part of it")
    integrating = _integrating(verdicts)
    if integrating:
        why.append(f"{integrating[0].label} ({integrating[0].node}) states it, but no specialist did")
    return why


def settle(
    verdicts: Sequence[Verdict], entailment: Entailment, threshold: float, recombination: str = ""
) -> Lineage:
    """The origin of a claim that no specialist nor the passage states (nor two
    specialists' parts recombine into), by its entailment check. `recombination`: why the
    parts two specialists state do not recombine into it, when they were checked."""
    why = _unstated(verdicts, threshold)
    if recombination:
        why.append(recombination)
    integrating = _integrating(verdicts)
    if not entailment.follows:
        why.append(f"it does not follow from the other sources: {entailment.reason}")
        if integrating:
            return _integrator(integrating, why)
        return Lineage(ClaimOrigin.UNSUPPORTED, "; ".join(why), entailment.method)
    turns = [s for v in entailment.support for s in v.candidate.texts if s.specialist]
    who = sorted({t.who for t in turns})
    named = ", ".join(
        "the passage" if is_passage(v.candidate) else v.candidate.first.node for v in entailment.support
    )
    why.append(f"it follows from {named}: {entailment.reason}")
    # a claim the passage supports (a sentence it follows from, or a part the passage
    # states) is the passage's, extended: never the specialists' emergence
    from_passage = any(is_passage(v.candidate) for v in entailment.support) or _passage_part(verdicts)
    if len(who) >= 2 and not from_passage:
        earliest = min(turns, key=lambda t: t.rank)
        perspectives = tuple(sorted({t.perspective for t in turns}))
        return Lineage(
            ClaimOrigin.EMERGENT, "; ".join(why), DecisionMethod.LLM, None, earliest, tuple(who), perspectives
        )
    if integrating:
        return _integrator(integrating, why)
    everything = [s for v in entailment.support for s in v.candidate.texts if s.is_turn]
    return Lineage(
        ClaimOrigin.INFERRED,
        "; ".join(why),
        DecisionMethod.LLM,
        None,
        min(everything, key=lambda t: t.rank) if everything else None,
        tuple(who),
        tuple(sorted({t.perspective for t in turns})),
    )


def _integrator(stating: Sequence[Said], why: list[str]) -> Lineage:
    """A claim only integrating texts state, and not emergent: the integrator's own."""
    turns = [t for t in stating if t.is_turn]
    earliest = min(turns, key=lambda t: t.rank) if turns else None
    return Lineage(
        ClaimOrigin.INTEGRATOR,
        "; ".join(why),
        DecisionMethod.LLM,
        None,
        earliest,
        tuple(sorted({t.who for t in turns})),
        tuple(sorted({t.perspective for t in turns})),
    )
