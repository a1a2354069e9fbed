"""The files a session writes beside the graph, as pydantic models: what they hold is
a contract (the seed's `mca_report.json` format, extended), validated in tests."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dagmca.config import SessionConfig
from dagmca.graph import Role, Strict


class AgentRound(Strict):
    """One agent in one round (the seed's AgentRoundData)."""

    role: Role
    perspective: str
    response: str = ""
    lateral_response: str | None = None
    revised: bool = False
    signal_sent: str | None = None
    signal_received: str | None = None
    # --self-reflect
    satisfaction: float | None = Field(None, ge=0.0, le=1.0)
    signal_up: str | None = None
    # --protocol decompose
    subtask: str | None = None
    subtasks: list[str] | None = None
    # --protocol vote / ensemble: the label of its latest answer, the label it voted for
    label: str | None = None
    vote_for: str | None = None


class RoundReport(Strict):
    round: int = Field(ge=1)
    agents: dict[str, AgentRound]
    convergence_score: float | None = None
    mean_sibling_similarity: float | None = Field(None, ge=0.0, le=1.0)


class Convergence(Strict):
    converged: bool
    rounds_used: int = Field(ge=0)
    score_trajectory: list[float]


class SummaryMetrics(Strict):
    total_llm_calls: int = Field(ge=0)
    lateral_revision_rate: float = Field(ge=0.0, le=1.0)
    per_agent_revision_counts: dict[str, int]
    # per round: mean pairwise Jaccard similarity of siblings' final texts of the round
    mean_sibling_similarity: list[float]
    final_length_words: int = Field(ge=0)


class SignalHop(Strict):
    """A bottom-up signal and what it caused."""

    round: int
    sender: str
    receiver: str | None
    kind: Literal[
        "unexpected_finding", "goal_mismatch", "needs_reframing", "contradiction_detected", "resource_request"
    ]
    critical: bool
    note: str
    rebroadcast: str | None  # the id of the re-broadcast turn it caused


class TrackerEvent(Strict):
    round: int
    kind: Literal[
        "answer", "new_answer", "vote", "restart", "rejected", "refused", "no_decision", "timeout", "winner"
    ]
    agent: str
    label: str | None = None
    vote_for: str | None = None
    detail: str = ""


class MCAReport(Strict):
    debate: str
    protocol: Literal["mca", "decompose", "vote", "ensemble"]
    task: str  # the question debated
    config: SessionConfig
    goal: str | None  # --broadcast
    rounds: list[RoundReport]
    convergence: Convergence
    summary_metrics: SummaryMetrics
    strange_loops: list[str]
    # round -> agent -> satisfaction (--self-reflect; empty without it)
    satisfaction_map: dict[int, dict[str, float]]
    signal_chain: list[SignalHop]
    # vote, ensemble: the winning answer's label and every step of the protocol
    winner: str | None = None
    tracker: list[TrackerEvent] = Field(default_factory=list)
    final_response: str


class DebateSummary(Strict):
    id: str
    origin: Literal["main", "branch", "revisit"]
    protocol: str
    depth: int
    question: str
    resolution: str
    rounds: int
    converged: bool
    report: str | None  # path of its mca_report.json, relative to the session's folder


class SynthesisSummary(Strict):
    id: str
    resolution: str
    similarity: float
    reason: str  # the judge's (method llm), or the similarity rule's (method embedding)
    method: str = "llm"
    shared_claim: str = ""


class TensionSummary(Strict):
    id: str
    question: str
    urgency: float = Field(ge=0.0, le=1.0)
    status: Literal["selected", "stub", "explored", "superseded", "dropped", "duplicate"]
    observer: str


class FinalState(Strict):
    session: str
    title: str
    status: str
    final: str | None
    debates: list[DebateSummary]
    syntheses: list[SynthesisSummary]
    tensions: list[TensionSummary]
    llm_calls: int = Field(ge=0)
    tokens: int = Field(ge=0)
    cost_usd: float = Field(ge=0.0)
