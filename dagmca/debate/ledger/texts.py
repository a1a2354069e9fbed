"""What the ledger traces, and what it traces it to: a session's texts in the order they
were said. A turn is said when it is written; a debate's resolution when the turn that
gave it was; a synthesis when it is written; the final answer after everything.

Turns also carry their place by debate, round and phase, which decides which of the
turns that state a claim said it first: turns of one phase run at once, so the order in
which they were written is not the order of the protocol.

The order is the protocol's, never the order the store happened to write in: debates
that run at once (sibling branches, their sub-branches) finish in a different order each
run, and a ledger that followed the writes would read different texts, in a different
order, each time, so its requests would miss the cache and a resumed session would ask
anew. Debates are ordered by origin (main, branches, revisits), depth and id; within a
debate, by round and phase; a resolution comes with the turn that gave it, a synthesis
after the debates it merges, the final after everything."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from dagmca.graph import (
    DebateNode,
    DebateOrigin,
    FinalNode,
    GraphNode,
    NodeKind,
    Phase,
    SynthesisNode,
    TurnNode,
    answers_passage,
)
from dagmca.metrics.session import agent_key
from dagmca.prompts import lines

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
    # a specialist's turn (an agent that answers the passage): only these count toward
    # single, recombined and emergent; a coordinator's or the root's turn, a resolution
    # and a synthesis are integrating texts
    specialist: bool = False
    # the passage's sentences nearest one claim, quoted to the judge as text 0 (a long
    # passage's prompts carry its map, not its words)
    excerpt: bool = False

    @property
    def is_turn(self) -> bool:
        return self.kind is NodeKind.TURN

    @property
    def integrating(self) -> bool:
        """A text an integrator or coordinator wrote: not a specialist's turn, not the passage."""
        return not self.specialist and self.kind is not NodeKind.SESSION


def _where(debate: DebateNode | None) -> str:
    if debate is None or debate.origin is DebateOrigin.MAIN:
        return "the main debate"
    return f"the {debate.origin.value} debate on: {debate.question}"


def _level(agent: str) -> int:
    found = _LEVEL.match(agent)
    return int(found.group(1)) if found else 0


def _sound(text: str, degenerate: bool) -> bool:
    return not degenerate and len(text.split()) >= MIN_WORDS


_ORIGIN = {DebateOrigin.MAIN: 0, DebateOrigin.BRANCH: 1, DebateOrigin.REVISIT: 2}
_LAST: tuple[int, int, int, int, str] = (1 << 30, 0, 0, 0, "")  # after every turn of a debate
Key = tuple[str, ...]  # compared as strings: see _comparable


def _places(debates: Sequence[DebateNode]) -> dict[str, int]:
    ordered = sorted(debates, key=lambda d: (_ORIGIN[d.origin], d.depth, d.id))
    return {d.id: i for i, d in enumerate(ordered)}


def said(
    nodes: Sequence[GraphNode], merged: Mapping[str, Sequence[str]] | None = None
) -> tuple[list[Said], list[Said]]:
    """(what claims are traced to, what may be traced) from a session's nodes: every
    sound turn, resolution and synthesis; and the resolutions, syntheses and the final.
    `merged`: each synthesis's member debates (its MERGES_INTO sources), which place it."""
    debates = {n.id: n for n in nodes if isinstance(n, DebateNode)}
    place = _places(list(debates.values()))
    keyed: list[tuple[Key, Said]] = []
    giving: dict[str, Key] = {}  # debate -> key of the turn that gave its resolution
    traceable: list[Said] = []
    final: FinalNode | None = None
    for n in nodes:
        if isinstance(n, TurnNode):
            d = debates.get(n.debate)
            rank = (
                place.get(n.debate, len(place)),
                n.round,
                _STAGE.get(n.phase, 1),
                -_level(n.agent),
                _STEP.get(n.phase, 0),
                n.agent,
            )
            key = _comparable((*rank, n.id))
            gave = d is not None and _gave(n.text, d)
            if gave and d is not None:
                giving[n.debate] = min(giving.get(n.debate, key), key)
            if not _sound(n.text, n.degenerate):
                continue
            # a turn that gave the resolution is read as the resolution itself: the
            # resolution's own claims are not traced to it, and the two are one candidate
            text = d.resolution if gave and d is not None else n.text
            keyed.append((key, Said(
                n.id, NodeKind.TURN, text, 0,
                f"a turn by {n.agent} ({n.perspective} {n.role.value}), round {n.round}, {n.phase.value}, "
                f"in {_where(d)}",
                n.debate, n.agent, n.perspective, agent_key(n), n.round, rank,
                specialist=answers_passage(n.role, n.phase),
            )))  # fmt: skip
        elif isinstance(n, FinalNode) and _sound(n.text, n.degenerate):
            final = n
    resolved: dict[str, Key] = {}
    for d in debates.values():
        given = giving.get(d.id, _comparable((place[d.id], *_LAST, d.id)))
        resolved[d.id] = (*given, "1")  # just after the turn that gave it
        if not _sound(d.resolution, d.degenerate):
            continue
        item = Said(d.id, NodeKind.DEBATE, d.resolution, 0, f"the resolution of {_where(d)}", d.id)
        keyed.append((resolved[d.id], item))
        traceable.append(item)
    for n in nodes:
        if isinstance(n, SynthesisNode) and _sound(n.resolution, n.degenerate):
            members = [resolved[m] for m in (merged or {}).get(n.id, []) if m in resolved]
            key = (*max(members), "2", n.id) if members else _comparable((len(place), *_LAST, n.id))
            item = Said(n.id, NodeKind.SYNTHESIS, n.resolution, 0, "a synthesis of converging debates")
            keyed.append((key, item))
            traceable.append(item)
    keyed.sort(key=lambda pair: pair[0])
    order = {s.node: i for i, (_, s) in enumerate(keyed)}
    pool = [replace(s, order=i) for i, (_, s) in enumerate(keyed)]
    traceable = sorted((replace(t, order=order[t.node]) for t in traceable), key=lambda t: t.order)
    if final is not None:
        traceable.append(Said(final.id, NodeKind.FINAL, final.text, len(keyed), "the final answer"))
    return pool, traceable


def _gave(text: str, debate: DebateNode) -> bool:
    """The turn with `text` gave `debate`'s resolution: the same words, or (a resolution
    stored in parts, rendered under their labels with any dropped disagreement put back)
    a root output in parts with the resolution's position."""
    if text.strip() == debate.resolution.strip():
        return True
    stored = lines.load_parts(debate.resolution_parts)
    if stored is None or not (stored.get("parsed") or stored.get("restored")):
        return False  # rendered as the model wrote it: the same words, checked above
    return lines.parse_parts(text).position.strip() == str(stored.get("position", "")).strip()


def _comparable(key: tuple[int | str, ...]) -> Key:
    """Keys mix numbers and names: compare numbers as numbers (zero-padded, shifted so a
    negative sorts below a positive), names as names."""
    return tuple(f"{int(k) + (1 << 40):013d}" if isinstance(k, int) else str(k) for k in key)


def before(target: Said, pool: Sequence[Said]) -> list[Said]:
    """What was said before `target`, but `target`'s own words (a resolution is the text
    of the turn that gave it)."""
    own = target.text.strip()
    return [s for s in pool if s.order < target.order and s.text.strip() != own and s.node != target.node]
