"""The ledger's control: a lone agent's answer traced against another session's sources
as the ledger traces that session's final. In an evaluation, the `single` arm's answer
to a task is traced against the passage and the texts of that task's debate (its turns,
resolutions and syntheses), which the lone agent never read: whatever share of its
claims comes out `single`, `recombined` or `emergent` is what the procedure credits by
chance, and the debate's own shares mean something only above it.

Nothing is written: the control's claims are not the lone agent's session's (its own
ledger traces them against its own turns) nor the debate's. The calls go through the
lone agent's session's client, recorded under CONTROL (as the text they trace), and
are cached as every ledger call, so a rerun replays them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from dagmca.debate.ledger.claims import split
from dagmca.debate.ledger.lineage import claim_node, lineage, sha
from dagmca.debate.ledger.prefilter import Candidate
from dagmca.debate.ledger.texts import Said, before, said
from dagmca.debate.ledger.trace import frame_of, passage_source, sources_of
from dagmca.debate.state import SessionState
from dagmca.graph import ClaimNode, EdgeType, FinalNode, NodeKind, node_from_record
from dagmca.metrics.ledger import LedgerShares, shares

CONTROL = "control"  # the traced text's place under the lone agent's session, in the call records


@dataclass
class ControlTrace:
    """A lone agent's answer traced against a debate's sources: its claims (not
    written), how many were left untraced (a budget, a failed call), and their shares
    by origin (None: nothing traced)."""

    session: str  # the lone agent's
    against: str  # the debate's session, whose passage and texts were the sources
    claims: list[ClaimNode] = field(default_factory=list)
    untraced: int = 0

    @property
    def shares(self) -> LedgerShares | None:
        return shares(self.claims)


def control_id(session: str, against: str) -> str:
    """The traced text's id: the lone agent's final, read against `against`."""
    return f"{session}/{CONTROL}/{against}"


async def trace_control(state: SessionState, against: str) -> ControlTrace:
    """The final answer of `state`'s session (a lone agent's) traced against session
    `against`'s passage and texts, every one of them said before it, with the ledger's
    own prefilter, judge and checks; `state`'s passage is the one traced against (the
    two sessions answer one task). Writes nothing."""
    own = state.handles.session_id
    result = ControlTrace(own, against)
    store = state.handles.store
    mine = [node_from_record(r) for r in await store.aread(lambda s: s.nodes(own))]
    final = next((n for n in mine if isinstance(n, FinalNode)), None)
    if final is None or not final.text.strip():
        return result
    records = await store.aread(lambda s: s.nodes(against))
    merges = await store.aread(lambda s: s.edges(against, EdgeType.MERGES_INTO))
    merged: dict[str, list[str]] = {}
    for e in merges:
        merged.setdefault(e.target, []).append(e.source)
    pool, _ = said([node_from_record(r) for r in records], merged)
    target = Said(control_id(own, against), NodeKind.FINAL, final.text, len(pool), "the final answer")
    frame = frame_of(state, mine)
    claims = await split(state, frame, target)
    if claims is None:
        result.untraced = 1
        return result
    found, near = await sources_of(state, claims, before(target, pool), passage_source(state))
    digest = sha(target.text)

    async def one(
        number: int, claim: str, picked: list[Candidate], close: list[Candidate]
    ) -> ClaimNode | None:
        whole = close[0] if close else None
        traced = await lineage(state, frame, claim, picked, whole, target.node)
        if traced is None:
            return None
        return claim_node(state, target, digest, number, len(claims), claim, traced)

    done = await asyncio.gather(
        *(one(k, c, p, n) for k, (c, p, n) in enumerate(zip(claims, found, near, strict=True), start=1))
    )
    result.claims = [c for c in done if c is not None]
    result.untraced = len(done) - len(result.claims)
    return result
