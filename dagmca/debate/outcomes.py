"""What one debate produced, by protocol: the shared part, and each protocol's own."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagmca.graph import TurnNode
from dagmca.prompts.lines import Parts


@dataclass
class DebateOutcome:
    protocol: str
    resolution: str = ""
    rounds: int = 0
    converged: bool = False
    scores: list[float] = field(default_factory=list)  # convergence score of rounds 2, 3, …
    turns: list[TurnNode] = field(default_factory=list)
    calls: int = 0  # every call the protocol made, failed ones included
    parts: Parts | None = None  # the root's output in parts (protocols that end at a root)
    source: str = ""  # the text the resolution was written from, when parts rewrote it


@dataclass
class SignalEvent:
    """A bottom-up signal (--self-reflect) and the re-broadcast it caused, if any."""

    round: int
    sender: str
    receiver: str | None  # None: the root has no one above it
    kind: str
    critical: bool
    note: str
    rebroadcast: str | None = None  # the id of the re-broadcast turn


@dataclass
class MCAOutcome(DebateOutcome):
    goal: str = ""  # the broadcast goal (--broadcast), if any
    signal_chain: list[SignalEvent] = field(default_factory=list)


@dataclass
class DecomposeOutcome(DebateOutcome):
    subtasks: dict[str, str] = field(default_factory=dict)  # agent -> the subtask it was given


@dataclass
class TrackerEvent:
    """One step of a peer protocol, in the order it took effect."""

    round: int
    kind: str  # answer, new_answer, vote, restart, rejected, refused, no_decision, timeout, winner
    agent: str
    label: str | None = None
    vote_for: str | None = None
    detail: str = ""


@dataclass
class PeerOutcome(DebateOutcome):
    winner: str | None = None  # the winning answer's label
    tracker: list[TrackerEvent] = field(default_factory=list)  # every step
