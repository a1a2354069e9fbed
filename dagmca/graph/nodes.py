"""The graph schema's node kinds as strict pydantic models, and their round trip through
the flat records a store keeps."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from dagmca.graph.node_base import GraphNode
from dagmca.graph.schema import (
    STUB_LABEL,
    ClaimOrigin,
    DebateOrigin,
    DecisionMethod,
    LedgerVerdict,
    NodeKind,
    NodeRecord,
    Phase,
    Role,
    Strict,
    TensionCategory,
    TensionStatus,
    utcnow,
)
from dagmca.graph.status import DebateStatus, SessionStatus
from dagmca.graph.store_nodes import (
    EvaluationNode,
    FindingNode,
    JudgeCheckNode,
    PersonaNode,
    SnapshotNode,
    SwarmNode,
    TaskNode,
)


class SessionNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.SESSION
    passage: str
    passage_sha256: str
    title: str
    config: str  # JSON of SessionConfig, secrets excluded
    model: str
    # the question asked of the passage (None: the open reading every session without one gets)
    question: str | None = None
    # JSON {role: model}: which model played each role (a strong judge over cheap debaters)
    role_models: str | None = None
    # the version of dagmca's prompts it ran with (dagmca.prompts.version; "" before it was kept)
    prompt_version: str = ""
    # JSON [{role, model, calls, tokens, cost_usd}]: the session's calls by role and model
    role_calls: str | None = None
    # the persistent agents' memory as the session started (JSON; --agent-memory store)
    agent_memory: str | None = None
    # the key settings, beside the JSON, so Cypher can filter sessions by them
    backend: str | None = None
    protocol: str | None = None
    cpp: int | None = None
    depth: int | None = None
    rounds: int | None = None
    strategy: str | None = None
    router: str | None = None
    seed: int | None = None
    # in a build: where the passage came from, and when the store's earlier open stubs
    # were judged against it (so a rerun knows the passage is finished)
    source: str | None = None
    linked_at: str | None = None
    # the OpenTelemetry trace of its latest run, when traced (--otel): a resumed or
    # revisited session's earlier runs are traces of their own, found by dagmca.session
    trace_id: str | None = None
    # degraded: `problems` says which whole function failed
    status: SessionStatus = SessionStatus.RUNNING
    problems: list[str] = Field(default_factory=list)
    started_at: str = Field(default_factory=utcnow)
    finished_at: str | None = None
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    omitted_chars: int = 0  # of quoted material, cut to fit a context window, over every call
    # the degeneration guard: replies asked again (a loop, an echo), and observers'
    # questions dropped for looping or restating the instructions
    reasks: int = 0
    dropped_tensions: int = 0
    # JSON {embedded, hits, waits, wait_s: {phase: s}}: its texts embedded, the lookups the
    # vectors cache answered, and the time its event loop awaited vectors, over its runs
    embedding: str | None = None
    # how the session fitted the model
    context_window: int | None = None
    context_window_source: str = ""
    tokenizer: str = ""
    structured_output: str = ""  # the structured-output mode negotiated at the pre-flight
    passage_tokens: int | None = None
    passage_mode: Literal["whole", "sections"] = "whole"
    # emergence metrics, set when the run ends
    specialization: float | None = None
    context_divergence: float | None = None
    differentiation_chi2: float | None = None
    differentiation_p: float | None = None
    cost_per_node: float | None = None


class DebateNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.DEBATE
    origin: DebateOrigin
    question: str
    resolution: str = ""
    # the root's output in parts, JSON {position, disagreements, agreements, inferences,
    # parsed, restored, unchanged}; `resolution` is written from it (None: stored before
    # parts, or a protocol without a root)
    resolution_parts: str | None = None
    # its resolution loops or echoes its prompt even after a re-ask: left out of merging
    # and integration
    degenerate: bool = False
    depth: int
    protocol: str = "mca"
    rounds: int = 0
    converged: bool = False
    status: DebateStatus = DebateStatus.RUNNING
    staff: list[str] | None = None  # the routed specialists' perspectives (--router)
    # emergence metrics, set when the run ends
    revision_rate: float | None = None
    sibling_similarity: float | None = None  # the last round's
    collapse_alarm: bool | None = None
    bloat_alarm: bool | None = None
    # the share of the resolution's sentences that no sentence of the children's last
    # round is close to, by embedding cosine: a similarity estimate of novelty (it cannot
    # tell a paraphrase from a new idea; the ledger's judged claims can)
    similarity_novelty: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        """Sessions stored before the rename keep loading: `root_novelty` was this figure."""
        if isinstance(data, dict) and "root_novelty" in data:
            data = dict(data)
            old = data.pop("root_novelty")
            data.setdefault("similarity_novelty", old)
        return data


class RoundNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.ROUND
    debate: str
    number: int
    root_output: str = ""
    convergence_score: float | None = None
    # a question session's main debate: JSON {answer: count} of the leaves' last answers
    answers: str | None = None
    # the same of their answers in the round's respond phase, before its lateral exchange
    # (in round 1, before any agent has read another: first-vote's answers, Choi et al. 2025)
    answers_before: str | None = None


class TurnNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.TURN
    debate: str
    agent: str
    role: Role
    perspective: str
    phase: Phase
    round: int
    text: str
    revised: bool = False
    tokens: int = 0
    # the text loops or echoes its prompt even after a re-ask: kept for the record, left
    # out of what observers, the merger and the integrator read
    degenerate: bool = False
    # a reflect turn (--self-reflect): how satisfied the agent is, and the signal it sends up
    satisfaction: float | None = None
    signal_kind: str | None = None
    # a lateral turn's stance line: kept, revised or changed, and what it gave as the reason
    stance: Literal["kept", "revised", "changed"] | None = None
    because: str | None = None
    # a question session's respond and lateral turns: the answer line and its confidence 0-1
    answer: str | None = None
    confidence: float | None = None
    # vote and ensemble: the anonymous label of an answer (agent2.1), the label voted for
    label: str | None = None
    vote_for: str | None = None
    # the debates this turn cited or echoed: one REFERENCES edge each (key: this turn)
    references: list[str] | None = None


class AgentNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.AGENT
    name: str
    role: Role
    perspective: str
    level: int


class RevisitCheck(Strict):
    after: str  # id of the node whose arrival triggered the check
    similarity: float
    outcome: Literal["open", "relevant", "superseded"]
    reason: str = ""
    method: DecisionMethod = DecisionMethod.EMBEDDING
    verdict: str = ""  # the judge's (answered / relevant / open), or the rule's
    answering_sentence: str = ""  # the new text's sentence that answers the stub
    # the judge's reason said nothing, asked again once: the check left the stub open
    degenerate: bool = False
    at: str = Field(default_factory=utcnow)


class TensionNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.TENSION
    debate: str
    question: str
    urgency: float
    rationale: str
    excerpt: str
    observer: str
    category: TensionCategory
    status: TensionStatus = TensionStatus.STUB
    # every flag that raised it, "observer@turn": one FLAGGED_AT edge each (key: observer)
    flags: list[str] = Field(default_factory=list)
    # every revisit check: one CHECKED_AGAINST edge each (key: its index here)
    revisit_checks: list[RevisitCheck] = Field(default_factory=list)
    dropped_reason: str = ""  # why a dropped or duplicate tension is no longer open
    duplicate_of: str = ""  # the earlier tension a duplicate asks the same as
    # why a flag the degeneration guard found restating its branch's question stands: the
    # judge's verdict that it asks something else (empty for every other tension)
    kept_reason: str = ""
    # its excerpt is the turn's sentence nearest the flag, not the observer's own quote
    # (the bundled model's concession, --unquoted-excerpts locate)
    excerpt_located: bool = False

    def extra_labels(self) -> tuple[str, ...]:
        return (STUB_LABEL,) if self.status is TensionStatus.STUB else ()


class SynthesisNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.SYNTHESIS
    resolution: str
    reason: str
    similarity: float
    method: DecisionMethod = DecisionMethod.EMBEDDING
    verdict: str = "converge"
    shared_claim: str = ""
    degenerate: bool = False


class FinalNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.FINAL
    text: str
    degenerate: bool = False
    # a question session's answer, short: the part a scorer reads (None: no question,
    # or the answer could not be had)
    answer: str | None = None
    # the section labels its text cites inline ([M], [B1], ...), each once, and those it
    # cited that named no section it was given (removed from the text)
    citations: list[str] = Field(default_factory=list)
    removed_citations: list[str] = Field(default_factory=list)
    # the text's sentences that make a claim (headings and labels aside), and those of
    # them that cite no section it was given (None: integrated before they were counted)
    claims: int | None = None
    uncited: list[str] | None = None


class ClaimCheck(Strict):
    """One earlier text the ledger's judge read against a claim, and its verdict."""

    node: str  # the text's node: a turn, a debate (its resolution) or a synthesis
    similarity: float  # the prefilter's cosine: the claim against the text's closest sentence
    verdict: LedgerVerdict
    sentence: str = ""  # the text's sentence that states the claim or its part
    reason: str = ""
    method: DecisionMethod = DecisionMethod.LLM
    # the judge's reason said nothing, asked again once: counted as unrelated
    degenerate: bool = False


class ClaimNode(GraphNode):
    """One atomic claim of a final, synthesis or debate resolution, traced by judgment
    to the earlier texts that state it or its parts (the emergence ledger)."""

    KIND: ClassVar[NodeKind] = NodeKind.CLAIM
    text: str
    origin: ClaimOrigin
    reason: str  # why this origin, naming the texts that decided it
    method: DecisionMethod = DecisionMethod.LLM
    stated_in: str  # the text it was split from (its STATED_IN edge)
    # of the text it was split from: a claim of an earlier version of that text (a
    # revisit integrated the final again) is no longer one of the text's claims
    source_sha256: str
    # the text changed since (a revisit integrated the final again): no longer its claim,
    # kept for the record
    superseded: bool = False
    number: int  # its place among the text's claims, from 1
    of: int  # how many claims the text was split into
    # the earliest specialist's turn that states it (its FIRST_STATED_AT edge; single only)
    first_stated_at: str = ""
    # where it first appears: the debate and round of the earliest turn that states it or,
    # recombined, a part of it, or (emergent, inferred) that it follows from, or
    # (integrator) the earliest coordinator's or root's turn that states it
    first_debate: str = ""
    first_round: int | None = None
    # who originates it: the specialist of the turn that first states it, or the
    # specialists whose turns state its parts, or (emergent, inferred) whose turns it
    # follows from, or (integrator) the coordinators or the root whose turns state it
    # (specialists by perspective, the others by seat); none for a passage claim
    agents: list[str] = Field(default_factory=list)
    perspectives: list[str] = Field(default_factory=list)
    # every earlier text the judge read against it: one DERIVES_FROM edge each that states
    # it or a part of it
    checks: list[ClaimCheck] = Field(default_factory=list)
    # an entailment check that decided its origin (the recombination check, or the check
    # of a claim no specialist states) gave a reason that said nothing (asked again
    # once): it counts as not following. Not `degenerate`: the claim's own text is sound
    degenerate_check: bool = False


class SectionNode(GraphNode):
    """A section of a long passage, cut on paragraph boundaries, and its map entry."""

    KIND: ClassVar[NodeKind] = NodeKind.SECTION
    number: int
    title: str  # "§3 (paragraphs 5-7)"
    text: str
    tokens: int
    claims: str = ""  # its claims in order, as the mapping call stated them


class IntegrationNode(GraphNode):
    """One group's integration: the final integrator read the graph in parts."""

    KIND: ClassVar[NodeKind] = NodeKind.INTEGRATION
    part: int
    text: str
    degenerate: bool = False


NODE_MODELS: dict[NodeKind, type[GraphNode]] = {
    m.KIND: m
    for m in (
        SessionNode,
        DebateNode,
        RoundNode,
        TurnNode,
        AgentNode,
        TensionNode,
        SynthesisNode,
        FinalNode,
        SectionNode,
        IntegrationNode,
        PersonaNode,
        ClaimNode,
        EvaluationNode,
        JudgeCheckNode,
        SwarmNode,
        TaskNode,
        SnapshotNode,
        FindingNode,
    )
}


def node_from_record(record: NodeRecord) -> GraphNode:
    """The model of a stored node: the inverse of `GraphNode.to_record` (structured
    values come back from their JSON strings)."""
    model = NODE_MODELS[record.kind]
    data: dict[str, Any] = {"id": record.id, "session": record.session, "created_at": record.created_at}
    for key, value in record.props.items():
        field = model.model_fields.get(key)
        rich = field is not None and getattr(field.annotation, "__origin__", None) in (list, dict)
        data[key] = json.loads(value) if rich and isinstance(value, str) else value
    return model.model_validate(data)
