"""The emergence ledger as read from a stored graph: each claim with its origin and
sources (`dagmca ledger`), and the novelty measures made of them: the shares of claims
by origin (passage, single, recombined, emergent, integrator, inferred, unsupported), who
originates the claims that survive into the final answer, and where each first
appeared (`metrics`, the run summary, `compare`, and an evaluation's arms through
`arm_shares`).

Only a text's current claims count: those split from its text as it now stands (a
revisit that integrates again gives the final new claims, and the old ones stay in the
graph for the record)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from dagmca.graph import (
    ClaimNode,
    ClaimOrigin,
    DebateNode,
    EdgeRecord,
    EdgeType,
    FinalNode,
    GraphNode,
    NodeKind,
    NodeRecord,
    Strict,
    SynthesisNode,
    TurnNode,
    node_from_record,
)
from dagmca.store.base import GraphStore

ORIGINS = tuple(o.value for o in ClaimOrigin)


class Source(Strict):
    """A text a claim derives from: it states the claim or a part of it."""

    id: str
    kind: str
    verdict: str
    sentence: str
    reason: str
    agent: str = ""  # a turn's seat
    round: int | None = None  # a turn's round


class ClaimLine(Strict):
    """One claim as `dagmca ledger --json` prints it."""

    id: str
    text: str
    stated_in: str
    origin: str
    first_stated_at: str | None
    derives_from: list[Source]
    reason: str
    method: str
    first_debate: str | None  # where it first appears: the debate and round of its earliest turn
    first_round: int | None
    agents: list[str]  # who originates it
    perspectives: list[str]


class LedgerShares(Strict):
    """The shares of a set of claims by origin (each 0-1; they sum to 1). Shares stored
    before the passage, the entailment check and the integrator's own origin were
    origins read as 0 for those."""

    claims: int
    single: float
    recombined: float
    emergent: float
    passage: float = 0.0
    inferred: float = 0.0
    unsupported: float = 0.0
    # claims only an integrating text states (a coordinator's or the root's turn, a
    # resolution, a synthesis) and not emergent: the integrator's own, never the group's
    integrator: float = 0.0
    # claims its texts were split into that are not traced yet (a budget ran out): the
    # shares are then of the traced ones only
    untraced: int = 0


class LedgerMetrics(Strict):
    final: LedgerShares | None  # the final answer's claims: the headline novelty measure
    traced: LedgerShares | None  # every traced text's claims (--ledger all: syntheses and resolutions too)
    # who originates the final's claims: agents (specialists by perspective), and perspectives
    originators: dict[str, int]
    perspectives: dict[str, int]
    # where the final's claims first appeared: "<debate> r<round>" -> claims
    first_appearance: dict[str, int]


def current(nodes: Sequence[GraphNode]) -> list[ClaimNode]:
    """The claims of the texts as they now stand, in the order they were written."""
    texts: dict[str, str] = {}
    for n in nodes:
        if isinstance(n, FinalNode):
            texts[n.id] = n.text
        elif isinstance(n, SynthesisNode | DebateNode):
            texts[n.id] = n.resolution
    digests = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in texts.items()}
    return [
        n
        for n in nodes
        if isinstance(n, ClaimNode) and not n.superseded and digests.get(n.stated_in) == n.source_sha256
    ]


def claim_lines(nodes: Sequence[GraphNode], edges: Sequence[EdgeRecord]) -> list[ClaimLine]:
    by_id = {n.id: n for n in nodes}
    derives: dict[str, list[EdgeRecord]] = {}
    for e in edges:
        if e.type is EdgeType.DERIVES_FROM:
            derives.setdefault(e.source, []).append(e)
    lines = []
    for c in current(nodes):
        sources = []
        for e in derives.get(c.id, []):
            target = by_id.get(e.target)
            turn = target if isinstance(target, TurnNode) else None
            sources.append(
                Source(
                    id=e.target,
                    kind=target.KIND.value if target is not None else "",
                    verdict=str(e.props.get("verdict", "")),
                    sentence=str(e.props.get("sentence", "")),
                    reason=str(e.props.get("reason", "")),
                    agent=turn.agent if turn else "",
                    round=turn.round if turn else None,
                )
            )
        lines.append(
            ClaimLine(
                id=c.id,
                text=c.text,
                stated_in=c.stated_in,
                origin=c.origin.value,
                first_stated_at=c.first_stated_at or None,
                derives_from=sources,
                reason=c.reason,
                method=c.method.value,
                first_debate=c.first_debate or None,
                first_round=c.first_round,
                agents=c.agents,
                perspectives=c.perspectives,
            )
        )
    return lines


def shares(claims: Sequence[ClaimNode]) -> LedgerShares | None:
    if not claims:
        return None
    count = Counter(c.origin.value for c in claims)
    n = len(claims)
    split = {(c.stated_in, c.source_sha256): c.of for c in claims}
    return LedgerShares(
        claims=n, untraced=sum(split.values()) - n, **{o: round(count[o] / n, 4) for o in ORIGINS}
    )


def _short(debate: str) -> str:
    return debate.split("/", 1)[-1] if "/" in debate else debate


def ledger_metrics(nodes: Sequence[GraphNode]) -> LedgerMetrics | None:
    """The session's ledger measures; None when nothing was traced."""
    claims = current(nodes)
    if not claims:
        return None
    finals = {n.id for n in nodes if isinstance(n, FinalNode)}
    final = [c for c in claims if c.stated_in in finals]
    return LedgerMetrics(
        final=shares(final),
        traced=shares(claims),
        originators=dict(Counter(a for c in final for a in c.agents).most_common()),
        perspectives=dict(Counter(p for c in final for p in c.perspectives).most_common()),
        first_appearance=dict(
            sorted(
                Counter(f"{_short(c.first_debate)} r{c.first_round}" for c in final if c.first_debate).items()
            )
        ),
    )


def debate_shares(nodes: Sequence[GraphNode]) -> dict[str, LedgerShares]:
    """Each debate's shares over its resolution's claims (traced with --ledger all)."""
    debates = {n.id for n in nodes if isinstance(n, DebateNode)}
    by_debate: dict[str, list[ClaimNode]] = {}
    for c in current(nodes):
        if c.stated_in in debates:
            by_debate.setdefault(c.stated_in, []).append(c)
    return {d: s for d, cs in by_debate.items() if (s := shares(cs)) is not None}


# the kinds `current` reads: the claims and the texts they were traced from
_CLAIMED = frozenset({NodeKind.CLAIM, NodeKind.FINAL, NodeKind.SYNTHESIS, NodeKind.DEBATE})


def final_claims(
    store: GraphStore, session: str, records: Sequence[NodeRecord] | None = None
) -> list[ClaimNode]:
    """The current claims of a session's final answer (none when it was not traced).
    `records`: the session's nodes when the caller has read them already. Only the
    claims and the texts they come from are validated (a session's turns are most of
    its nodes)."""
    read = store.nodes(session) if records is None else records
    nodes = [node_from_record(r) for r in read if r.kind in _CLAIMED]
    finals = {n.id for n in nodes if isinstance(n, FinalNode)}
    return [c for c in current(nodes) if c.stated_in in finals]


def arm_shares(
    store: GraphStore, session: str, records: Sequence[NodeRecord] | None = None
) -> LedgerShares | None:
    """The shares of a session's final claims: an evaluation arm's novelty beside its
    quality; None when its final was not traced."""
    return shares(final_claims(store, session, records))
