"""The graph schema: node kinds and edge types as str enums (the edge
enum is the whitelist of relationship types: Cypher cannot take them as parameters),
and the records every store keeps."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

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
    PERSONA = "Persona"  # an agent of the pool across sessions, in no session
    CLAIM = "Claim"  # one atomic claim of a final, synthesis or resolution (the emergence ledger)
    EVALUATION = "Evaluation"  # one `dagmca eval`: its tasks, arms, judge and results
    JUDGE_CHECK = "JudgeCheck"  # one `dagmca judge-check`: a judge's measures, that an eval reads
    SWARM = "Swarm"  # one `dagmca swarm`: its stream, routers and settings
    TASK = "Task"  # one task of a swarm's stream
    SNAPSHOT = "Snapshot"  # a swarm's S, D and F after so many tasks
    # what recurs across several sessions of one passage: a tension, a claim of the final
    # answer or an answer, aligned by judgment across the samples (`dagmca stability`)
    FINDING = "Finding"


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
    PLAYS = "PLAYS"  # (seat:Agent)-[:PLAYS]->(p:Persona): a session's seat, played by the persistent agent
    # (later:Tension)-[:DUPLICATES {method, verdict, similarity, reason}]->(earlier:Tension):
    # the later stub asks what the earlier asks; always to an earlier one, so acyclic
    DUPLICATES = "DUPLICATES"
    # the emergence ledger: (c:Claim)-[:STATED_IN]->(the text it was split from),
    # (c)-[:FIRST_STATED_AT]->(t:Turn), the earliest turn that states it, and
    # (c)-[:DERIVES_FROM {verdict, sentence, reason, similarity, method}]->(text): one per
    # earlier text the judge found stating it (states) or a part of it (partial), or, for a
    # claim no text states, that it follows from (supports); the passage is its Session node
    STATED_IN = "STATED_IN"
    FIRST_STATED_AT = "FIRST_STATED_AT"
    DERIVES_FROM = "DERIVES_FROM"
    # an evaluation: (e:Evaluation)-[:RAN {arm, task, repeat}]->(s:Session), one per
    # session it ran, and (f1:Final)-[:JUDGED_AGAINST {key, verdict, order, criterion,
    # reason}]->(f2:Final), one per order a judge read the pair in, verdict from f1's side
    RAN = "RAN"
    JUDGED_AGAINST = "JUDGED_AGAINST"
    # a swarm: (p:Persona)-[:ATTEMPTED {swarm, router, repeat, position, success, ms,
    # tokens, answer}]->(t:Task), one per attempt, keyed by run and position
    ATTEMPTED = "ATTEMPTED"
    # a finding across samples: (f:Finding)-[:SEEN_IN]->(s:Session), one per session it
    # recurs in; (f)-[:AS]->(member), the tension, claim or final it is in that session;
    # (f)-[:COMPARED_WITH {member, kind, verdict, reason, verdicts, reason_swapped,
    # similarity, method}]->(other), one per pair of two sessions' members judged: f's
    # `member` (the earlier sample's) against `other` (a match, distinct or undecided,
    # with the judge's reason), keyed by the member; from the finding, so that every
    # relationship has an end in its own session (the findings')
    SEEN_IN = "SEEN_IN"
    AS = "AS"
    COMPARED_WITH = "COMPARED_WITH"


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
    # past --max-open-stubs and less urgent than the stubs kept: in the graph, not open
    DROPPED = "dropped"
    # judged to ask what an earlier open stub asks: in the graph, DUPLICATES its twin
    DUPLICATE = "duplicate"


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


# the phases in which an agent answers the passage itself rather than others' answers (a
# tree of one agent has its root answer: the specialist there)
ANSWERING = frozenset({Phase.RESPOND, Phase.LATERAL, Phase.ANSWER, Phase.NEW_ANSWER})


def answers_passage(role: str, phase: str) -> bool:
    """A turn by this role in this phase is a specialist's (an agent that answers the
    passage): only those count toward a claim's single, recombined and emergent origins.
    A coordinator's or the root's observation, synthesis or reflection integrates."""
    return role == Role.SPECIALIST or phase in ANSWERING


class CallPhase(StrEnum):
    """What an LLM call that is not a debate turn is for (a turn's call carries the
    turn's `Phase`). The final integration is always allowed: budgets keep it in reserve."""

    MONITOR = "monitor"
    JUDGE = "judge"  # a verdict on two branches, or on a stub against a new node
    MERGE = "merge"
    MAP = "map"  # a section's claims, for the map of a long passage
    INTEGRATE = "integrate"  # one group of the final integration
    FINAL = "final"
    LEDGER = "ledger"  # the emergence ledger: a text split into claims, a claim's sources judged
    ASK = "ask"  # an answer from the stored graph (`dagmca ask`), outside any session
    PAIR = "pair"  # an evaluation's verdict on two arms' answers to one task (`dagmca eval`)


class ModelRole(StrEnum):
    """Which model plays a call: each role may have its own model and endpoint (a
    strong judge over cheap debaters). A call's role follows from its phase."""

    DEBATE = "debate"  # specialists, coordinators, the integrator
    OBSERVER = "observer"
    JUDGE = "judge"  # merge verdicts and syntheses, stub checks, duplicates, pairs, the ledger
    FINAL = "final"  # the final integration, and answers from the stored graph (`ask`)
    MAP = "map"  # the sections of a long passage


# the calls that are not debate turns, by phase; every other phase is a turn's
PHASE_ROLES: dict[str, ModelRole] = {
    CallPhase.MONITOR: ModelRole.OBSERVER,
    CallPhase.JUDGE: ModelRole.JUDGE,
    CallPhase.MERGE: ModelRole.JUDGE,
    CallPhase.MAP: ModelRole.MAP,
    CallPhase.INTEGRATE: ModelRole.FINAL,
    CallPhase.FINAL: ModelRole.FINAL,
    CallPhase.LEDGER: ModelRole.JUDGE,
    CallPhase.ASK: ModelRole.FINAL,
    CallPhase.PAIR: ModelRole.JUDGE,
}


def role_of(phase: str) -> ModelRole:
    """The role of a call made for `phase` (a CallPhase or a turn's Phase)."""
    # looked up by its text (a CallPhase is a str): a turn's phase, not a CallPhase, is
    # the debate's, without building and raising an error for every turn's call
    return PHASE_ROLES.get(phase, ModelRole.DEBATE)


class ClaimOrigin(StrEnum):
    """Where a claim of the ledger comes from, judged against the passage and the agents'
    turns; a claim that none of them states gets one entailment check against them. Only
    specialists' turns count toward single, recombined and emergent."""

    SINGLE = "single"  # a specialist's turn states it (and the passage does not)
    # no specialist's turn states it whole; turns by two or more specialists state its
    # parts, and one entailment check finds those parts together support all of it
    RECOMBINED = "recombined"
    # none of the above, and it follows from the sources, with turns by two or more
    # specialists among those it follows from and not the passage (sessions before the
    # entailment check: none of the above)
    EMERGENT = "emergent"
    PASSAGE = "passage"  # the passage states it: the debate did not add it
    INFERRED = "inferred"  # no text states it; it follows from the sources, one specialist's at most
    UNSUPPORTED = "unsupported"  # no text states it, and it does not follow from them
    # only integrating texts state it (a coordinator's or the root's turn, a resolution, a
    # synthesis), and it is not emergent: the integrator's own claim, never the group's
    INTEGRATOR = "integrator"


class LedgerVerdict(StrEnum):
    """The judge on one earlier text against one claim."""

    STATES = "states"
    PARTIAL = "partial"  # it states a part of the claim
    UNRELATED = "unrelated"
    SUPPORTS = "supports"  # it states no part, but the claim follows from it (the entailment check)


class FindingKind(StrEnum):
    """What a finding across samples is: a tension, a claim of the final answer (the
    ledger's), or a question session's short answer."""

    TENSION = "tension"
    CLAIM = "claim"
    ANSWER = "answer"


class AlignVerdict(StrEnum):
    """Two samples' members, judged: the same finding (`match`, in both orders), not
    (`distinct`), or `undecided` (the verdict changed with the order, the reason said
    nothing, or no verdict was had). Only `match` puts them in one finding."""

    MATCH = "match"
    DISTINCT = "distinct"
    UNDECIDED = "undecided"


class DecisionMethod(StrEnum):
    """Who made a decision of the DAG: the LLM judge, or the similarity rule alone
    (--judge embedding, or a candidate the prefilter did not pass); for two samples'
    short answers, the evaluation's scorer."""

    LLM = "llm"
    EMBEDDING = "embedding"
    SCORER = "scorer"


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


def edge(source: str, target: str, type_: EdgeType, session: str, **props: JSONScalar) -> EdgeRecord:
    return EdgeRecord(source=source, target=target, type=type_, session=session, props=props)
