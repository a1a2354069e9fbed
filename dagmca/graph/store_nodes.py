"""The node kinds that belong to the store, not to one session: the agents that persist
across sessions, the experiments run over many (evaluations, swarms) and what recurs
across a passage's samples (findings)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_serializer, model_validator

from dagmca.graph.node_base import GraphNode, renamed
from dagmca.graph.schema import FindingKind, NodeKind, Strict, utcnow
from dagmca.graph.status import RunStatus

# Personas belong to the store, not to a session: this is their `session` property.
PERSONA_SESSION = "_agents"


class TrackRecord(Strict):
    """An agent's record in one category (a tension's, a swarm task's type): its trials
    and successes, as the router reads it and a persona keeps it. Stored (and read back)
    as the pair `[trials, successes]`."""

    trials: int = 0
    successes: int = 0

    @model_validator(mode="before")
    @classmethod
    def _from_pair(cls, data: Any) -> Any:
        if isinstance(data, list | tuple) and len(data) == 2:
            return {"trials": data[0], "successes": data[1]}
        return data

    @model_serializer
    def _as_pair(self) -> list[int]:
        return [self.trials, self.successes]

    @property
    def rate(self) -> float:
        """The success rate, Laplace-smoothed: an agent with no record starts at 1/2."""
        return (self.successes + 1) / (self.trials + 2)

    def __add__(self, other: TrackRecord) -> TrackRecord:
        return TrackRecord(trials=self.trials + other.trials, successes=self.successes + other.successes)

    def __sub__(self, other: TrackRecord) -> TrackRecord:
        return TrackRecord(trials=self.trials - other.trials, successes=self.successes - other.successes)


class PersonaNode(GraphNode):
    """An agent of the pool across sessions: one per perspective. What it
    learned carries into the next session on the store: its latest contributions that
    survived (seen in its prompts) and its success record by tension category (read by
    the router). Each session's seats link to it with PLAYS."""

    KIND: ClassVar[NodeKind] = NodeKind.PERSONA
    name: str  # the perspective as a slug
    perspective: str
    sessions: list[str] = Field(default_factory=list)  # the sessions it took part in, in order
    kept: list[str] = Field(default_factory=list)  # its latest surviving contributions, newest last
    kept_total: int = 0  # contributions that survived their debate, over every session
    record: dict[str, TrackRecord] = Field(default_factory=dict)  # category -> [trials, successes]
    trials: int = 0  # over every category: the record's sums, for Cypher
    successes: int = 0
    updated_at: str = Field(default_factory=utcnow)


class PersonaMemory(Strict):
    """What a persona knew when a session started: its kept contributions and its record
    by category (a session keeps its personas' on its node, `agent_memory`, as JSON, so a
    resumed run starts from the same)."""

    kept: list[str] = Field(default_factory=list)
    record: dict[str, TrackRecord] = Field(default_factory=dict)


# Evaluations belong to the store, not to a session: this is their `session` property
# (and their edges'), so that every whole-store reading finds them beside the personas.
EVALUATION_SESSION = "_evaluations"


class EvaluationNode(GraphNode):
    """One `dagmca eval`, its `session` EVALUATION_SESSION; RAN edges reach the sessions
    it ran. `settings` and `summary` are JSON strings."""

    KIND: ClassVar[NodeKind] = NodeKind.EVALUATION
    eval_id: str
    tasks: int
    task_ids: list[str] = Field(default_factory=list)
    arms: list[str] = Field(default_factory=list)
    repeats: int = 1
    judge_model: str = ""
    judge_prompt_version: str = ""  # the judge's prompt (dagmca.evaluation.judging)
    debate_prompt_version: str = ""  # dagmca's prompts, that its sessions ran with
    settings: str = "{}"
    summary: str = "{}"
    status: RunStatus = RunStatus.RUNNING

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return renamed(data, prompt_version="judge_prompt_version")  # as earlier versions stored it


class JudgeCheckNode(GraphNode):
    """One `dagmca judge-check`, its `session` EVALUATION_SESSION: the judge it measured
    (backend, model, endpoint, pair prompt version), who wrote the answers it compared,
    and each measure with its interval and status (`checks`, JSON); an eval of that judge
    prints the latest."""

    KIND: ClassVar[NodeKind] = NodeKind.JUDGE_CHECK
    judge_llm: str
    judge_model: str
    endpoint: str = ""  # the judge's base URL ("" for its backend's default)
    judge_prompt_version: str  # the pair prompt's version (dagmca.evaluation.judging)
    writer: str = ""
    other_model: str = ""
    tasks: int = 0
    checks: str = "[]"
    status: str = "not_measured"  # the worst of its checks: pass, warn, fail (or not_measured)
    checked_at: str = Field(default_factory=utcnow)
    report: str = "{}"  # the whole report (JSON), as `judge-check --json` prints it

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return renamed(data, prompt_version="judge_prompt_version")  # as earlier versions stored it


# Swarms belong to the store, not to a session, like evaluations
SWARM_SESSION = "_swarms"


class SwarmNode(GraphNode):
    """One `dagmca swarm`: its stream's tasks, agents, routers and settings (JSON)."""

    KIND: ClassVar[NodeKind] = NodeKind.SWARM
    swarm_id: str
    tasks: int
    agents: list[str] = Field(default_factory=list)
    routers: list[str] = Field(default_factory=list)
    repeats: int = 1
    settings: str = "{}"
    summary: str = "{}"
    # with --memory store: the personas' records by type when it started (JSON), which
    # seed every run's router, and a resumed run's the same
    memory: str = "{}"
    status: RunStatus = RunStatus.RUNNING


class TaskNode(GraphNode):
    """One task of a swarm's stream; `check` is reference or code."""

    KIND: ClassVar[NodeKind] = NodeKind.TASK
    swarm_id: str
    task_id: str
    type: str
    check: str
    prompt: str
    position: int


class SnapshotNode(GraphNode):
    """A swarm run's S, D and F after `seen` tasks (one run: a router and a repeat)."""

    KIND: ClassVar[NodeKind] = NodeKind.SNAPSHOT
    swarm_id: str
    router: str
    repeat: int
    seen: int
    accuracy: float
    s: float | None = None
    s_noise: float | None = None
    d: float | None = None
    f_chi2: float | None = None
    f_dof: int | None = None
    f_p: float | None = None


# Findings belong to no one session: they span the samples of a study (`dagmca
# stability`), like evaluations; their relationships too, so each session's own graph
# (and its check) stays exactly what the session wrote.
FINDINGS_SESSION = "_findings"


class FindingNode(GraphNode):
    """What recurs across several sessions of one passage (a study's samples): one
    group of tensions, claims of the final answer or short answers, at most one per
    session, every two of them judged a match in both orders. `k` of the `n` samples
    (`samples`) reached it, with the Wilson interval `lo`-`hi` of that rate; `core`:
    in at least half of them. SEEN_IN each session it is in, AS each member there."""

    KIND: ClassVar[NodeKind] = NodeKind.FINDING
    study: str
    # what it aligns: tensions, claims or answers (not `kind`, every node's label)
    aligns: FindingKind
    text: str  # its member's text in the earliest sample that has it
    k: int
    n: int
    rate: float  # k / n
    lo: float
    hi: float
    core: bool  # 2k >= n
    sessions: list[str] = Field(default_factory=list)  # where it is seen, in the samples' order
    members: list[str] = Field(default_factory=list)  # its member in each of those sessions
    samples: list[str] = Field(default_factory=list)  # the sessions counted in n
    models: list[str] = Field(default_factory=list)  # the model of each session it is seen in
    # a claim finding: each member's origin in its session's ledger (what a recurring
    # claim rests on is still each session's own support)
    origins: list[str] = Field(default_factory=list)
    # a digest of what the study aligned (the members' texts, the judge's settings): a
    # study id given again for other inputs is refused, not overwritten
    inputs: str = ""
    prompt_version: str = ""  # the alignment judge's prompts


# the store's own sessions, in the order a whole-store reading (an export of the store,
# the embedded Cypher engine) takes them after the sessions
SHARED_SESSIONS = (PERSONA_SESSION, EVALUATION_SESSION, SWARM_SESSION, FINDINGS_SESSION)
