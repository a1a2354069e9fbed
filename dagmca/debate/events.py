"""What a running session reports as it goes: one frozen dataclass per kind of event.

The pipeline emits them; the live progress, `status.json` and `events.jsonl` consume
them. `name` is the kind as `events.jsonl` writes it; `data()` is the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Event:
    name: ClassVar[str]
    # fields in the passage's or the models' words (questions, reasons, replies quoted in
    # errors): traces carry them only when asked to (--otel-content)
    words: ClassVar[frozenset[str]] = frozenset(
        {"question", "twin_question", "selected", "stubbed", "reason", "detail", "error"}
    )

    def data(self) -> dict[str, Any]:
        # an event's instance dict holds its fields, in their order, and nothing else
        # (frozen, without slots): read at once, for the event log and for a trace
        return dict(self.__dict__)


@dataclass(frozen=True)
class PhaseChanged(Event):
    name: ClassVar[str] = "phase"
    phase: str


@dataclass(frozen=True)
class PassageSectioned(Event):
    """The passage did not fit its share of a prompt: the long-passage path."""

    name: ClassVar[str] = "passage_sectioned"
    sections: int
    tokens: int
    share: int  # the tokens the passage may take in a prompt


@dataclass(frozen=True)
class RoundStarted(Event):
    name: ClassVar[str] = "round"
    debate: str
    number: int


@dataclass(frozen=True)
class TurnRecorded(Event):
    name: ClassVar[str] = "turn"
    debate: str
    agent: str
    phase: str


@dataclass(frozen=True)
class DebateDone(Event):
    name: ClassVar[str] = "debate_done"
    debate: str
    origin: str


@dataclass(frozen=True)
class TensionFlagged(Event):
    name: ClassVar[str] = "tension"
    debate: str
    urgency: float
    question: str
    observer: str


@dataclass(frozen=True)
class DuplicateChecked(Event):
    """An open stub judged against the earlier open stub most like it."""

    name: ClassVar[str] = "duplicate_check"
    stub: str
    question: str
    twin: str  # the earlier stub it was judged against (merged into, when `merged`)
    twin_question: str
    merged: bool
    similarity: float
    method: str
    reason: str
    verdict: str = ""  # duplicate or distinct; undecided when no judge answered
    degenerate: bool = False  # the judge's reason said nothing: undecided, merged nothing


@dataclass(frozen=True)
class BranchesSelected(Event):
    name: ClassVar[str] = "branches"
    debate: str
    count: int
    candidates: int
    selected: tuple[tuple[str, float], ...]  # (question, urgency) of each new branch
    stubbed: tuple[tuple[str, float], ...]  # the same of each tension kept as a stub


@dataclass(frozen=True)
class BranchStarted(Event):
    name: ClassVar[str] = "branch_start"
    debate: str
    question: str


@dataclass(frozen=True)
class BranchRouted(Event):
    name: ClassVar[str] = "route"
    debate: str
    category: str
    staff: tuple[str, ...]


@dataclass(frozen=True)
class Credited(Event):
    name: ClassVar[str] = "credit"
    debate: str
    survived: tuple[str, ...]  # the agents whose contribution survived into the resolution


@dataclass(frozen=True)
class SynthesisWritten(Event):
    name: ClassVar[str] = "synthesis"
    node: str
    members: int
    similarity: float
    reason: str
    method: str = "llm"


@dataclass(frozen=True)
class PairJudged(Event):
    """A verdict on two finished branches (one the prefilter passed)."""

    name: ClassVar[str] = "pair_judged"
    source: str  # the later branch
    target: str
    verdict: str  # converge, contradict, elaborate, unrelated; undecided when no judge answered
    method: str  # llm or embedding
    similarity: float
    reason: str
    degenerate: bool = False  # the judge's reason said nothing: undecided, nothing merged or related


@dataclass(frozen=True)
class StubChecked(Event):
    name: ClassVar[str] = "revisit_check"
    stub: str
    question: str
    outcome: str  # open, relevant, superseded
    after: str  # the node whose arrival triggered the check
    similarity: float
    method: str = "embedding"  # llm or embedding
    reason: str = ""
    degenerate: bool = False  # the judge's reason said nothing: the stub stays open


@dataclass(frozen=True)
class StubRevisited(Event):
    name: ClassVar[str] = "revisit"
    stub: str


@dataclass(frozen=True)
class NodeCapReached(Event):
    name: ClassVar[str] = "node_cap"
    nodes: int


@dataclass(frozen=True)
class PeerStep(Event):
    """A step of the vote or ensemble protocol (a tracker entry of its report)."""

    name: ClassVar[str] = "peer"
    debate: str
    round: int
    kind: str
    agent: str
    label: str | None
    vote_for: str | None
    detail: str


@dataclass(frozen=True)
class CallFailed(Event):
    name: ClassVar[str] = "call_failed"
    debate: str
    agent: str
    error: str


@dataclass(frozen=True)
class Reasked(Event):
    """A degenerate reply (a loop, an echo of the prompt) asked again, with varied sampling."""

    name: ClassVar[str] = "reasked"
    debate: str
    agent: str
    reason: str
    mended: bool  # the second reply was sound


@dataclass(frozen=True)
class TensionDropped(Event):
    """An observer's question not kept: it loops or restates the observers' instructions."""

    name: ClassVar[str] = "tension_dropped"
    debate: str
    observer: str
    question: str
    reason: str


@dataclass(frozen=True)
class MetricsFailed(Event):
    name: ClassVar[str] = "metrics_failed"
    error: str


class EventSink(Protocol):
    """Receives a session's events: the CLI renders them; tests may record them."""

    def emit(self, event: Event) -> None: ...


class NoEvents:
    def emit(self, event: Event) -> None:
        return None
