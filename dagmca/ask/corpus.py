"""The part of the stored graph an ask reads: which sessions (the scope), the nodes whose
texts are retrieved from, and the relationships the expansion and the dissent follow.

Read in one pass per session on the store's thread; everything after works on this
snapshot."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dagmca.errors import UserError
from dagmca.graph import EdgeType, NodeKind, NodeRecord, TensionStatus
from dagmca.store import require_session
from dagmca.store.base import GraphStore

# the kinds whose texts are indexed: what the debates concluded, the claims those
# conclusions were split into (the emergence ledger), and what the debates said
INDEXED = (
    NodeKind.FINAL, NodeKind.SYNTHESIS, NodeKind.DEBATE, NodeKind.CLAIM, NodeKind.TENSION, NodeKind.TURN,
)  # fmt: skip
# which sessions an ask reads: named ids, "all" of the store, or "latest" (None too)
Sessions = Sequence[str] | Literal["all", "latest"] | None


@dataclass(frozen=True)
class Scope:
    """The sessions an ask reads, and how they were chosen, in words. `every`: the whole
    store (its index is then read without a session filter)."""

    sessions: list[str]
    note: str
    every: bool = False
    # when each session's Session node was made: a session deleted and run again under
    # its id starts its graph version again, and this tells the two apart
    born: Mapping[str, str] = field(default_factory=dict)

    @property
    def filter(self) -> list[str] | None:
        return None if self.every else self.sessions


def scope_of(store: GraphStore, sessions: Sessions) -> Scope:
    """The sessions named (each must exist); "all": every session of the store; "latest"
    or None: the most recent one, and the note says so. A store without sessions: an
    empty scope."""
    if sessions == "all":
        nodes = store.sessions()
        found = [s.id for s in nodes]
        born = {s.id: s.created_at for s in nodes}
        return Scope(found, f"every session of the store ({len(found)})", every=True, born=born)
    if sessions is not None and sessions != "latest":
        if isinstance(sessions, str):
            raise UserError(f"sessions must be a list of ids, 'all' or 'latest', not {sessions!r}")
        born = {s: require_session(store, s).created_at for s in sessions}
        named = list(born)
        note = f"session {named[0]}" if len(named) == 1 else f"sessions {', '.join(named)}"
        return Scope(named, note, born=born)
    every = store.sessions()
    if not every:
        return Scope([], "no session: the store holds none yet")
    latest = max(every, key=lambda s: str(s.props.get("started_at") or s.created_at))
    note = f"the most recent session, {latest.id} (--session or --all to choose)"
    return Scope([latest.id], note, born={latest.id: latest.created_at})


def text_sha(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Entry:
    """An indexed node: its text as retrieved and as shown to the model. `props` are the
    node's own; `on` the question of a turn's debate."""

    id: str
    session: str
    kind: NodeKind
    text: str
    debate: str = ""  # the debate it belongs to (a turn's, a tension's; a debate's own id)
    status: str = ""  # a tension's status
    question: str = ""  # a debate's or a tension's question
    urgency: float = 0.0
    props: Mapping[str, object] = field(default_factory=dict, compare=False)
    on: str = ""
    # of the text: what the index keys a vector on, with the id (given when read back
    # from a snapshot, made from the text otherwise)
    sha: str = ""

    def __post_init__(self) -> None:
        if not self.sha:
            object.__setattr__(self, "sha", text_sha(self.text))

    @functools.cached_property
    def label(self) -> str:
        """What the node is, in a few words (made when asked: only hits are shown)."""
        p = self.props
        if self.kind is NodeKind.FINAL:
            return "Final answer of the session"
        if self.kind is NodeKind.SYNTHESIS:
            return "Synthesis of converging branches"
        if self.kind is NodeKind.DEBATE:
            origin = str(p.get("origin", ""))
            name = "Main" if origin == "main" else origin.capitalize()
            return f"{name} debate (depth {p.get('depth', 0)}) on: {self.question}"
        if self.kind is NodeKind.CLAIM:
            return f"Claim ({p.get('origin', '')}) of {p.get('stated_in', '')}"
        if self.kind is NodeKind.TENSION:
            by = p.get("observer", "an observer")
            return f"Tension ({self.status}, urgency {self.urgency:.2f}) flagged by {by}"
        who = p.get("perspective", p.get("agent", ""))
        label = f"Turn of {who} ({p.get('phase', '')}, round {p.get('round', '')})"
        return label + (f" in the debate on: {self.on}" if self.on else "")


def _sound(props: Mapping[str, object], key: str) -> str:
    """A text property, unless the node is marked degenerate (a loop, an echo: kept in
    the graph, never an answer's source)."""
    if props.get("degenerate") is True:
        return ""
    return str(props.get(key) or "").strip()


def entry_of(node: NodeRecord, debates: Mapping[str, NodeRecord]) -> Entry | None:
    """The node as an index entry, or None for a kind not indexed or a node without a
    sound text."""
    p, kind = node.props, node.kind
    if kind is NodeKind.TURN:
        text, debate = _sound(p, "text"), str(p.get("debate", ""))
        on = str(debates[debate].props.get("question", "")) if debate in debates else ""
        return Entry(node.id, node.session, kind, text, debate, props=p, on=on) if text else None
    if kind is NodeKind.CLAIM:  # a claim of a text as it stands (not one a revisit replaced)
        text = "" if p.get("superseded") is True else str(p.get("text") or "").strip()
        source = str(p.get("stated_in", ""))
        debate = source if source in debates else ""  # a claim of a debate's resolution
        return Entry(node.id, node.session, kind, text, debate, props=p) if text else None
    question = str(p.get("question", "")).strip()
    if kind is NodeKind.TENSION:
        status, urgency = str(p.get("status", "")), float(str(p.get("urgency", 0) or 0))
        text = f"{question}\n{str(p.get('rationale', '')).strip()}".strip() if question else ""
        debate = str(p.get("debate", ""))
        return (
            Entry(node.id, node.session, kind, text, debate, status, question, urgency, p) if text else None
        )
    key = {NodeKind.FINAL: "text", NodeKind.SYNTHESIS: "resolution", NodeKind.DEBATE: "resolution"}.get(kind)
    text = _sound(p, key) if key else ""
    debate = node.id if kind is NodeKind.DEBATE else ""
    return Entry(node.id, node.session, kind, text, debate, question=question, props=p) if text else None


@dataclass(frozen=True)
class SessionPart:
    """One session's share of a corpus: its indexed nodes, every node id, and the
    MERGES_INTO (debate, synthesis) and CONTRADICTS (source, target, reason) pairs."""

    session: str
    entries: list[Entry]
    ids: list[str]
    merges: list[tuple[str, str]]
    contradicts: list[tuple[str, str, str]]


def part_of(store: GraphStore, session: str) -> SessionPart:
    """A session's part, read from the graph."""
    nodes = store.nodes(session)
    debates = {n.id: n for n in nodes if n.kind is NodeKind.DEBATE}
    entries = [e for n in nodes if n.kind in INDEXED and (e := entry_of(n, debates)) is not None]
    merges = [(e.source, e.target) for e in store.edges(session, EdgeType.MERGES_INTO)]
    contradicts = [
        (e.source, e.target, str(e.props.get("reason", "")))
        for e in store.edges(session, EdgeType.CONTRADICTS)
    ]
    return SessionPart(session, entries, [n.id for n in nodes], merges, contradicts)


@dataclass(repr=False)
class Corpus:
    """The scope's indexed nodes (by id, in creation order) and the relationships the
    expansion and the dissent need."""

    scope: Scope
    entries: dict[str, Entry] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)  # every node of the scope, indexed or not
    # debate -> the syntheses it merges into; synthesis -> the debates merged
    syntheses_of: dict[str, list[str]] = field(default_factory=dict)
    members_of: dict[str, list[str]] = field(default_factory=dict)
    # CONTRADICTS relationships: source, target, session, the judge's reason
    contradicts: list[tuple[str, str, str, str]] = field(default_factory=list)
    # debate -> its open stubs, most urgent first
    open_stubs_of: dict[str, list[str]] = field(default_factory=dict)
    # each session's graph version when it was read (where the index tracks the graph)
    versions: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        # short: asyncio writes the repr of a task's result in places (the runner's
        # SIGINT handler), and a whole corpus is every text of the scope
        return f"Corpus({self.scope.note!r}, {len(self.entries)} entries)"

    @classmethod
    def load(cls, store: GraphStore, scope: Scope) -> Corpus:
        corpus = cls(scope)
        for session in scope.sessions:
            corpus.add(part_of(store, session))
        return corpus

    def add(self, part: SessionPart) -> None:
        self.ids.update(part.ids)
        stubs_of: dict[str, list[str]] = {}
        for entry in part.entries:
            self.entries[entry.id] = entry
            if entry.kind is NodeKind.TENSION and entry.status == TensionStatus.STUB.value:
                stubs_of.setdefault(entry.debate, []).append(entry.id)
        for debate, stubs in stubs_of.items():
            self.open_stubs_of.setdefault(debate, []).extend(stubs)
            self.open_stubs_of[debate].sort(key=lambda s: -self.entries[s].urgency)
        for source, target in part.merges:
            self.syntheses_of.setdefault(source, []).append(target)
            self.members_of.setdefault(target, []).append(source)
        for source, target, reason in part.contradicts:
            self.contradicts.append((source, target, part.session, reason))

    def debates_of(self, node: str) -> list[str]:
        """The debates a node belongs to: a debate itself, a turn's or a tension's
        debate, the debates a synthesis merged."""
        entry = self.entries.get(node)
        if entry is None:
            return []
        if entry.kind is NodeKind.SYNTHESIS:
            return list(self.members_of.get(node, []))
        return [entry.debate] if entry.debate else []

    def reconciled(self, a: str, b: str) -> bool:
        """Whether some synthesis merged both debates."""
        return bool(set(self.syntheses_of.get(a, [])) & set(self.syntheses_of.get(b, [])))

    def contradicting(self, debate: str) -> list[str]:
        """The debates `debate` contradicts or is contradicted by."""
        out = [t for s, t, _, _ in self.contradicts if s == debate]
        return out + [s for s, t, _, _ in self.contradicts if t == debate]
