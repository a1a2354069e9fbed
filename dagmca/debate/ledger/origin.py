"""A claim's origin, from the judge's verdicts on its candidate texts.

The origin is decided on the agents' turns, the texts someone in the debate said:
- single: some turn states the claim; the earliest such turn, by debate, round and
  phase, is where it was first stated;
- recombined: no turn states it, but turns by two or more agents state its parts;
- emergent: neither. A synthesis or resolution may state it (the claim is then
  recorded as deriving from it, and the reason names it), but no agent did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.debate.ledger.texts import Said
from dagmca.debate.ledger.verdicts import Verdict
from dagmca.models import ClaimOrigin, DecisionMethod, LedgerVerdict


@dataclass(frozen=True)
class Lineage:
    origin: ClaimOrigin
    reason: str
    method: DecisionMethod
    first: Said | None = None  # the earliest turn that states it
    # where it first appears: the earliest turn that states it, or one of its parts
    earliest: Said | None = None
    agents: tuple[str, ...] = ()  # who originates it
    perspectives: tuple[str, ...] = ()


def _turns(verdicts: Sequence[Verdict], verdict: LedgerVerdict) -> list[Said]:
    return [s for v in verdicts if v.verdict is verdict for s in v.candidate.texts if s.is_turn]


def _names(turns: Sequence[Said]) -> str:
    return ", ".join(sorted({t.who for t in turns}))


def _where(turn: Said) -> str:
    return f"{turn.agent} ({turn.perspective}), round {turn.round}, {turn.node}"


def decide(verdicts: Sequence[Verdict], threshold: float) -> Lineage:
    """The origin of a claim whose candidates got `verdicts` (none: the prefilter found
    no earlier text within `threshold` of it)."""
    if not verdicts:
        return Lineage(
            ClaimOrigin.EMERGENT,
            f"no earlier text comes within cosine {threshold} of it (the prefilter), so none states it",
            DecisionMethod.EMBEDDING,
        )
    stating = _turns(verdicts, LedgerVerdict.STATES)
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
    why = ["no turn states it"]
    if parts:
        why.append(f"only {_names(parts)} states a part of it")
    derived = [s for v in verdicts if v.verdict is LedgerVerdict.STATES for s in v.candidate.texts]
    if derived:
        why.append(f"{derived[0].label} ({derived[0].node}) states it, but no agent did")
    return Lineage(ClaimOrigin.EMERGENT, "; ".join(why), DecisionMethod.LLM)
