"""What the ledger traces, and what it traces it to: a session's texts in the order they
were said. A turn is said when it is written; a debate's resolution when the turn that
gave it was; a synthesis when it is written; the final answer after everything.

Turns also carry their place by debate, round and phase, which decides which of the
turns that state a claim said it first: turns of one phase run at once, so the order in
which they were written is not the order of the protocol."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.metrics.session import agent_key
from dagmca.models import (
    DebateNode,
    DebateOrigin,
    FinalNode,
    GraphNode,
    NodeKind,
    Phase,
    SynthesisNode,
    TurnNode,
)

# Within a round, the protocol's order: what comes before the round's walk (a broadcast,
# a decomposition), the walk up the tree level by level (at each level the answers or
# observations first, then the lateral revisions, then votes), then what comes after it.
_STAGE = {
    Phase.BROADCAST: 0, Phase.DECOMPOSE: 0,
    Phase.RESPOND: 1, Phase.ANSWER: 1, Phase.OBSERVE: 1, Phase.LATERAL: 1, Phase.NEW_ANSWER: 1,
    Phase.VOTE: 1, Phase.RESTART: 1, Phase.TIMEOUT: 1,
    Phase.REFLECT: 2, Phase.SIGNAL: 3, Phase.SYNTHESIZE: 4, Phase.PRESENT: 4, Phase.STRANGE_LOOP: 5,
}  # fmt: skip
_STEP = {Phase.LATERAL: 1, Phase.NEW_ANSWER: 1, Phase.VOTE: 2, Phase.RESTART: 2, Phase.TIMEOUT: 2}
_LEVEL = re.compile(r"^L(\d+)N")
MIN_WORDS = 3  # shorter texts (a failed call's placeholder) state nothing worth tracing


@dataclass(frozen=True)
class Said:
    """One text of the session: a turn, a debate's resolution, a synthesis or the final."""

    node: str
    kind: NodeKind
    text: str
    order: int  # when it was said, among the session's texts
    label: str  # how a prompt names it
    debate: str = ""  # the debate it belongs to ("" for a synthesis or the final)
    # a turn's: its seat, perspective, who it is across debates (agent_key), round, and
    # its place by debate, round and phase
    agent: str = ""
    perspective: str = ""
    who: str = ""
    round: int | None = None
    rank: tuple[int, int, int, int, int, str] = (0, 0, 0, 0, 0, "")

    @property
    def is_turn(self) -> bool:
        return self.kind is NodeKind.TURN


def _where(debate: DebateNode | None) -> str:
    if debate is None or debate.origin is DebateOrigin.MAIN:
        return "the main debate"
    return f"the {debate.origin.value} debate on: {debate.question}"


def _level(agent: str) -> int:
    found = _LEVEL.match(agent)
    return int(found.group(1)) if found else 0


def _sound(text: str, degenerate: bool) -> bool:
    return not degenerate and len(text.split()) >= MIN_WORDS


def said(nodes: Sequence[GraphNode]) -> tuple[list[Said], list[Said]]:
    """(what claims are traced to, what may be traced) from a session's nodes in the
    order the store keeps them (the order they were first written): every sound turn,
    resolution and synthesis; and the resolutions, syntheses and the final."""
    debates = {n.id: n for n in nodes if isinstance(n, DebateNode)}
    place = {d: i for i, d in enumerate(debates)}
    pool: list[Said] = []
    last_turn: dict[str, tuple[int, str]] = {}  # debate -> (order, text) of its latest turn
    giving: dict[str, int] = {}  # debate -> order of the turn that gave its resolution
    traceable: list[Said] = []
    final: FinalNode | None = None
    for order, n in enumerate(nodes):
        if isinstance(n, TurnNode):
            d = debates.get(n.debate)
            if d is not None and n.text.strip() == d.resolution.strip():
                giving[n.debate] = order
            last_turn[n.debate] = (order, n.text)
            if not _sound(n.text, n.degenerate):
                continue
            rank = (
                place.get(n.debate, len(place)),
                n.round,
                _STAGE.get(n.phase, 1),
                -_level(n.agent),
                _STEP.get(n.phase, 0),
                n.agent,
            )
            pool.append(Said(
                n.id, NodeKind.TURN, n.text, order,
                f"a turn by {n.agent} ({n.perspective} {n.role.value}), round {n.round}, {n.phase.value}, "
                f"in {_where(d)}",
                n.debate, n.agent, n.perspective, agent_key(n), n.round, rank,
            ))  # fmt: skip
        elif isinstance(n, SynthesisNode) and _sound(n.resolution, n.degenerate):
            item = Said(n.id, NodeKind.SYNTHESIS, n.resolution, order, "a synthesis of converging debates")
            pool.append(item)
            traceable.append(item)
        elif isinstance(n, FinalNode) and _sound(n.text, n.degenerate):
            final = n
    for d in debates.values():
        if not _sound(d.resolution, d.degenerate):
            continue
        order = giving.get(d.id, last_turn.get(d.id, (len(nodes), ""))[0])
        item = Said(d.id, NodeKind.DEBATE, d.resolution, order, f"the resolution of {_where(d)}", d.id)
        pool.append(item)
        traceable.append(item)
    if final is not None:
        traceable.append(Said(final.id, NodeKind.FINAL, final.text, len(nodes), "the final answer"))
    pool.sort(key=lambda s: s.order)
    return pool, traceable


def before(target: Said, pool: Sequence[Said]) -> list[Said]:
    """What was said before `target`, but `target`'s own words (a resolution is the text
    of the turn that gave it)."""
    own = target.text.strip()
    return [s for s in pool if s.order < target.order and s.text.strip() != own and s.node != target.node]
