"""The graph schema of DESIGN §6 as strict pydantic models.

Node kinds and edge types are str enums; the edge enum is the whitelist of
relationship types (Cypher cannot take them as parameters).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class NodeKind(StrEnum):
    SESSION = "Session"
    DEBATE = "Debate"
    ROUND = "Round"
    TURN = "Turn"
    AGENT = "Agent"
    TENSION = "Tension"
    SYNTHESIS = "Synthesis"
    FINAL = "Final"
    SECTION = "Section"  # a section of a passage too long to go whole into every prompt
    INTEGRATION = "Integration"  # one group's integration, when the graph outgrows one prompt


STUB_LABEL = "Stub"


class EdgeType(StrEnum):
    # structure (must stay acyclic)
    BRANCHES_FROM = "BRANCHES_FROM"
    EXPLORES = "EXPLORES"
    MERGES_INTO = "MERGES_INTO"
    SUPERSEDES = "SUPERSEDES"
    # relations (cycles allowed)
    REFERENCES = "REFERENCES"
    CONTRADICTS = "CONTRADICTS"
    ELABORATES = "ELABORATES"
    # provenance
    HAS_ROUND = "HAS_ROUND"
    NEXT = "NEXT"
    IN_ROUND = "IN_ROUND"
    BY = "BY"
    REVISES = "REVISES"
    OBSERVES = "OBSERVES"
    FLAGGED_AT = "FLAGGED_AT"
    INTEGRATES = "INTEGRATES"
    IN_SESSION = "IN_SESSION"
    READS = "READS"  # (d:Debate)-[:READS {as: map | verbatim}]->(s:Section)
    # (stub:Tension)-[:CHECKED_AGAINST {key, similarity, verdict, decision, reason, at}]->(node):
    # one per revisit check, so why a stub stayed open is a query, not a JSON string
    CHECKED_AGAINST = "CHECKED_AGAINST"


STRUCTURAL_EDGES = frozenset(
    {EdgeType.BRANCHES_FROM, EdgeType.EXPLORES, EdgeType.MERGES_INTO, EdgeType.SUPERSEDES}
)
RELATION_EDGES = frozenset({EdgeType.REFERENCES, EdgeType.CONTRADICTS, EdgeType.ELABORATES})


class DebateOrigin(StrEnum):
    MAIN = "main"
    BRANCH = "branch"
    REVISIT = "revisit"


class TensionStatus(StrEnum):
    SELECTED = "selected"
    STUB = "stub"
    EXPLORED = "explored"
    SUPERSEDED = "superseded"


class TensionCategory(StrEnum):
    GAP = "gap"
    ASSUMPTION = "assumption"
    CONTRADICTION = "contradiction"
    OPEN_QUESTION = "open_question"
    META = "meta"


class Role(StrEnum):
    SPECIALIST = "specialist"
    COORDINATOR = "coordinator"
    INTEGRATOR = "integrator"


class Phase(StrEnum):
    RESPOND = "respond"
    LATERAL = "lateral"
    OBSERVE = "observe"
    SIGNAL = "signal"
    STRANGE_LOOP = "strange_loop"
    # second-seed options of the MCA engine
    BROADCAST = "broadcast"
    REFLECT = "reflect"
    # the top-down baseline (--protocol decompose)
    DECOMPOSE = "decompose"
    SYNTHESIZE = "synthesize"
    # vote (MassGen-style) and ensemble
    ANSWER = "answer"
    NEW_ANSWER = "new_answer"
    VOTE = "vote"
    RESTART = "restart"  # a new answer reset the votes (no call)
    TIMEOUT = "timeout"  # an agent ran out of time and was wrapped up (no call)
    PRESENT = "present"


class CallPhase(StrEnum):
    """What an LLM call that is not a debate turn is for (a turn's call carries the
    turn's `Phase`). The final integration is always allowed: budgets keep it in reserve."""

    MONITOR = "monitor"
    JUDGE = "judge"  # a verdict on two branches, or on a stub against a new node
    MERGE = "merge"
    MAP = "map"  # a section's claims, for the map of a long passage
    INTEGRATE = "integrate"  # one group of the final integration
    FINAL = "final"


JSONScalar = str | int | float | bool


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Strict(BaseModel):
    """The base of every model dagmca writes or reads: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


class NodeRecord(Strict):
    """A node as every store keeps it: kind label, extra labels, flat properties."""

    id: str
    kind: NodeKind
    session: str
    created_at: str
    labels: tuple[str, ...] = ()
    props: dict[str, JSONScalar | list[str]] = Field(default_factory=dict)


class EdgeRecord(Strict):
    """A relationship is one per (source, target, type, key): `key` (a property) keeps
    apart relationships that can occur more than once between the same pair — two
    observers flagging one turn, two turns of a debate citing another."""

    source: str
    target: str
    type: EdgeType
    session: str
    props: dict[str, JSONScalar] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.props.get("key", ""))


def _flatten(value: Any) -> JSONScalar | list[str] | None:
    """Neo4j properties are scalars or lists of scalars: anything richer becomes JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class GraphNode(Strict):
    """Base of every node kind: stable id, session, creation time."""

    KIND: ClassVar[NodeKind]

    id: str
    session: str
    created_at: str = Field(default_factory=utcnow)

    def extra_labels(self) -> tuple[str, ...]:
        return ()

    def to_record(self) -> NodeRecord:
        props: dict[str, JSONScalar | list[str]] = {}
        for key, value in self.model_dump(mode="json", exclude={"id", "session", "created_at"}).items():
            flat = _flatten(value)
            if flat is not None:  # Neo4j drops null properties; so do we.
                props[key] = flat
        return NodeRecord(
            id=self.id,
            kind=self.KIND,
            session=self.session,
            created_at=self.created_at,
            labels=self.extra_labels(),
            props=props,
        )


class SessionNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.SESSION
    passage: str
    passage_sha256: str
    title: str
    config: str  # JSON of SessionConfig, secrets excluded
    model: str
    # the key settings, beside the JSON, so Cypher can filter sessions by them
    backend: str | None = None
    protocol: str | None = None
    cpp: int | None = None
    depth: int | None = None
    rounds: int | None = None
    strategy: str | None = None
    router: str | None = None
    seed: int | None = None
    # degraded: it ran to the end, but a whole function failed (every flag, say): `problems` says which
    status: Literal["running", "done", "degraded", "failed", "interrupted", "budget_exhausted"] = "running"
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
    # how the session fitted the model (DESIGN §4)
    context_window: int | None = None
    context_window_source: str = ""
    tokenizer: str = ""
    structured_output: str = ""  # the structured-output mode negotiated at the pre-flight
    passage_tokens: int | None = None
    passage_mode: Literal["whole", "sections"] = "whole"
    # emergence metrics (DESIGN §5), set when the run ends
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
    # its resolution loops or echoes its prompt even after a re-ask: left out of merging
    # and integration
    degenerate: bool = False
    depth: int
    protocol: str = "mca"
    rounds: int = 0
    converged: bool = False
    status: Literal["running", "done", "failed"] = "running"
    staff: list[str] | None = None  # the routed specialists' perspectives (--router)
    # emergence metrics (DESIGN §5), set when the run ends
    revision_rate: float | None = None
    sibling_similarity: float | None = None  # the last round's
    collapse_alarm: bool | None = None
    bloat_alarm: bool | None = None
    root_novelty: float | None = None


class RoundNode(GraphNode):
    KIND: ClassVar[NodeKind] = NodeKind.ROUND
    debate: str
    number: int
    root_output: str = ""
    convergence_score: float | None = None


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


class DecisionMethod(StrEnum):
    """Who made a decision of the DAG: the LLM judge, or the similarity rule alone
    (--judge embedding, or a candidate the prefilter did not pass)."""

    LLM = "llm"
    EMBEDDING = "embedding"


class RevisitCheck(Strict):
    after: str  # id of the node whose arrival triggered the check
    similarity: float
    outcome: Literal["open", "relevant", "superseded"]
    reason: str = ""
    method: DecisionMethod = DecisionMethod.EMBEDDING
    verdict: str = ""  # the judge's (answered / relevant / open), or the rule's
    answering_sentence: str = ""  # the new text's sentence that answers the stub
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
    )
}


def node_from_record(record: NodeRecord) -> GraphNode:
    """The model of a stored node: the inverse of `GraphNode.to_record` (structured
    values come back from their JSON strings)."""
    model = NODE_MODELS[record.kind]
    data: dict[str, Any] = {"id": record.id, "session": record.session, "created_at": record.created_at}
    for key, value in record.props.items():
        field = model.model_fields.get(key)
        rich = field is not None and getattr(field.annotation, "__origin__", None) is list
        data[key] = json.loads(value) if rich and isinstance(value, str) else value
    return model.model_validate(data)


def edge(source: str, target: str, type_: EdgeType, session: str, **props: JSONScalar) -> EdgeRecord:
    return EdgeRecord(source=source, target=target, type=type_, session=session, props=props)


class CallRecord(Strict):
    """One LLM call as the store accounts it (DESIGN §4). Not a graph node: kept beside
    the graph (SQLite table `llm_calls`, Neo4j label `LLMCall` without `Node`)."""

    session: str
    agent: str = ""
    debate: str = ""
    phase: str = ""
    model: str = ""
    key: str = ""  # the cache key of the request
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens the server's own prompt cache served
    latency_s: float = 0.0
    cache_hit: bool = False  # answered from dagmca's response cache: no call made
    retries: int = 0
    faults: list[str] = Field(default_factory=list)
    repaired: bool = False
    error: str = ""
    cost_usd: float = 0.0
    omitted_chars: int = 0  # of quoted material, cut to fit the context window
    reask: bool = False  # a re-ask of a degenerate reply, with varied sampling
    at: str = Field(default_factory=utcnow)
