"""The emergence ledger's invariants, checked on a loaded session graph: every claim is
stated in one answer; its origin agrees with its edges (a single claim's first turn
states it, a recombined one's parts come from two agents' turns and no specialist's
turn states it whole, a passage one derives from the passage stating it, no
specialist's turn or passage states an emergent or integrator one and an integrating
text (a coordinator's or the root's turn, a resolution, a synthesis) states an
integrator one, no turn or passage states an inferred or unsupported one, an inferred
one names what it follows from and an unsupported one nothing); every DERIVES_FROM
carries its verdict, sentence and reason; and every judged source a claim records has
its edge."""

from __future__ import annotations

import json
from typing import Any

from dagmca.graph import ClaimOrigin, EdgeType, LedgerVerdict, NodeKind, Role, answers_passage

ANSWERS = frozenset({NodeKind.FINAL.value, NodeKind.SYNTHESIS.value, NodeKind.DEBATE.value})
CLAIM_EDGES = frozenset(
    {EdgeType.STATED_IN.value, EdgeType.FIRST_STATED_AT.value, EdgeType.DERIVES_FROM.value}
)
DERIVING = frozenset({LedgerVerdict.STATES.value, LedgerVerdict.PARTIAL.value, LedgerVerdict.SUPPORTS.value})
# no turn or passage sentence states a claim of these origins
UNSTATED = frozenset({ClaimOrigin.INFERRED.value, ClaimOrigin.UNSUPPORTED.value})
# no specialist's turn or passage sentence states a claim of these (an integrating text may)
UNSAID = frozenset({ClaimOrigin.EMERGENT.value, ClaimOrigin.INTEGRATOR.value})
# the texts that integrate: every answer but the final, which the claims are split from
INTEGRATING = frozenset({NodeKind.SYNTHESIS.value, NodeKind.DEBATE.value})


def _specialist(d: dict[str, Any]) -> bool:
    return d.get("kind") == NodeKind.TURN.value and answers_passage(str(d.get("role")), str(d.get("phase")))


def _who(d: dict[str, Any]) -> str:
    """An agent across debates: a specialist by its perspective, the others by their seat."""
    return str(d.get("perspective") if d.get("role") == Role.SPECIALIST.value else d.get("agent"))


def check_claims(g: Any, own: Any) -> list[str]:
    """Broken ledger invariants of graph `g`; `own(data)` tells a node of the checked
    session from one of another."""
    problems: list[str] = []
    kind = {n: d.get("kind") for n, d in g.nodes(data=True)}
    for u, v, t in g.edges(data="type"):
        if t in CLAIM_EDGES and kind.get(u) != NodeKind.CLAIM.value:
            problems.append(f"{t} edge {u} -> {v} does not start at a Claim")
    for c, d in g.nodes(data=True):
        if d.get("kind") == NodeKind.CLAIM.value and own(d):
            problems += _claim(g, c, d, kind)
    return problems


def _claim(g: Any, c: str, d: dict[str, Any], kind: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for _, v, data in g.out_edges(c, data=True):
        out.setdefault(str(data.get("type")), []).append((v, data))
    stated = out.get(EdgeType.STATED_IN.value, [])
    if len(stated) != 1 or kind.get(stated[0][0]) not in ANSWERS:
        problems.append(f"claim {c} is not STATED_IN exactly one final, synthesis or resolution")
    derives = out.get(EdgeType.DERIVES_FROM.value, [])
    for v, e in derives:
        if e.get("verdict") not in DERIVING or not e.get("sentence") or not e.get("reason"):
            problems.append(f"claim {c}: DERIVES_FROM {v} lacks its verdict, sentence or reason")
    states = [v for v, e in derives if e.get("verdict") == LedgerVerdict.STATES.value]
    turns_state = [v for v in states if kind.get(v) == NodeKind.TURN.value]
    specialists_state = [v for v in turns_state if _specialist(g.nodes[v])]
    integrating_state = [
        v for v in states if kind.get(v) in INTEGRATING or (v in turns_state and v not in specialists_state)
    ]
    passage_states = [v for v in states if kind.get(v) == NodeKind.SESSION.value]
    supports = [v for v, e in derives if e.get("verdict") == LedgerVerdict.SUPPORTS.value]
    first = [v for v, _ in out.get(EdgeType.FIRST_STATED_AT.value, [])]
    origin = d.get("origin")
    if origin == ClaimOrigin.SINGLE.value:
        if len(first) != 1 or first[0] not in turns_state:
            problems.append(f"single claim {c} has no FIRST_STATED_AT turn that states it")
    elif first:
        problems.append(f"claim {c} is {origin} but has a FIRST_STATED_AT edge")
    if origin == ClaimOrigin.RECOMBINED.value:
        parts = {
            _who(g.nodes[v])
            for v, e in derives
            if kind.get(v) == NodeKind.TURN.value and e.get("verdict") == LedgerVerdict.PARTIAL.value
        }
        if specialists_state or len(parts) < 2:
            problems.append(
                f"recombined claim {c} does not derive from two agents' turns, no specialist's stating it"
            )
    elif origin in UNSTATED and (turns_state or passage_states):
        problems.append(f"{origin} claim {c} derives from a turn or the passage that states it")
    elif origin in UNSAID and (specialists_state or passage_states):
        problems.append(f"{origin} claim {c} derives from a specialist's turn or the passage that states it")
    elif origin == ClaimOrigin.INTEGRATOR.value and not integrating_state:
        problems.append(f"integrator claim {c} derives from no integrating text that states it")
    elif origin == ClaimOrigin.PASSAGE.value and not passage_states:
        problems.append(f"passage claim {c} does not derive from the passage stating it")
    elif origin == ClaimOrigin.INFERRED.value and not supports:
        problems.append(f"inferred claim {c} names no source it follows from")
    elif origin == ClaimOrigin.UNSUPPORTED.value and supports:
        problems.append(f"unsupported claim {c} derives from a source it follows from")
    elif origin not in {o.value for o in ClaimOrigin}:
        problems.append(f"claim {c} has unknown origin {origin!r}")
    checks = d.get("checks")
    have = {v for v, _ in derives}
    for i, check in enumerate(json.loads(checks) if isinstance(checks, str) else []):
        if check.get("verdict") in DERIVING and check.get("node") not in have:
            problems.append(f"claim {c}: judged source {i} ({check.get('node')}) has no DERIVES_FROM edge")
    return problems
