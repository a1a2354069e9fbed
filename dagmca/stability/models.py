"""What a study returns (`dagmca stability`, `run --samples`): the samples, the findings
by recurrence with their intervals, the shares that recur, the overlaps between pairs
of samples, what each model reaches, and what the alignment cost against its estimate.
Strict models: `--json` is their JSON."""

from __future__ import annotations

from pydantic import Field

from dagmca.graph import FindingKind, Strict
from dagmca.metrics.recurrence import Recurring


class SampleInfo(Strict):
    """One session of the study, with the settings that made it a different sample."""

    session: str
    sample: int  # its place in the study, from 1
    model: str
    seed: int | None = None
    temperature: float | None = None
    status: str = ""
    ran: bool = False  # this call ran (or resumed) it; False: found finished


class FindingRow(Strict):
    """One finding: `k` of the `n` samples reached it (`rate`, with the Wilson interval
    `lo`-`hi`); `core` when it is in at least half of them."""

    id: str
    kind: FindingKind
    k: int
    n: int
    rate: float
    lo: float
    hi: float
    core: bool
    sessions: list[str]
    members: list[str]
    text: str
    models: list[str] = Field(default_factory=list)
    origins: list[str] = Field(default_factory=list)  # a claim's origin in each session's ledger


class Overlap(Strict):
    """Two samples' findings of one kind: those both reach (`shared`) over those either
    reaches (`union`), a Jaccard index, with the Wilson interval of that share."""

    first: str
    second: str
    kind: FindingKind
    shared: int
    union: int
    jaccard: float | None
    lo: float
    hi: float


class ModelReach(Strict):
    """What the sessions of one model reach (with `--vary model`)."""

    model: str
    sessions: list[str]
    findings: list[str]
    core: int  # of them, in the study's core


class AlignCost(Strict):
    """The alignment's cost, projected before any judge call: the pairs each judge reads
    (two calls a pair: both orders), their prompt tokens as counted, their replies at
    the judge's cap, priced at the judge role's model."""

    pairs: dict[str, int]  # by kind: pairs the LLM judge reads
    scored: int  # answer pairs the scorer compares, at no call
    calls: int
    prompt_tokens: int
    completion_tokens_max: int
    cost_usd_max: float
    model: str
    prices: str


class AlignSpend(Strict):
    """What the alignment spent in this run (replies replayed from the cache are free)."""

    calls: int
    cache_hits: int
    tokens: int
    cost_usd: float


class Verdicts(Strict):
    """The pairs judged, by verdict; `unjudged` ones got none (a rerun asks them)."""

    compared: int = 0
    match: int = 0
    distinct: int = 0
    undecided: int = 0
    unjudged: int = 0


class StabilityReport(Strict):
    """A study of `n` samples of one passage. `written`: its findings are in the graph
    (not on a dry run, nor while a pair is unjudged)."""

    study: str
    passage_sha256: str
    question: str | None = None
    n: int
    samples: list[SampleInfo]
    findings: list[FindingRow] = Field(default_factory=list)
    core: int = 0
    once: int = 0  # findings seen in one sample only
    shares: list[Recurring] = Field(default_factory=list)
    overlaps: list[Overlap] = Field(default_factory=list)
    models: list[ModelReach] = Field(default_factory=list)  # with two or more models
    every_model: list[str] = Field(default_factory=list)  # the findings every model reaches
    verdicts: Verdicts = Field(default_factory=Verdicts)
    estimate: AlignCost
    spent: AlignSpend | None = None
    untraced: list[str] = Field(default_factory=list)  # sessions with no traced final: no claims
    written: bool = False
    notes: list[str] = Field(default_factory=list)
