"""What an evaluation found, one record at a time: each session's scored answer and
spend, and each judged pair's verdict. The report is built from these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dagmca.evaluation.judging import Outcome
from dagmca.evaluation.scoring import Score

# a first-vote record whose source session has no first-round answer: the task is
# unread for it (counted), never scored wrong
UNREAD = "unread"
OVERALL = "overall"  # the judge's overall verdict, the one every comparison counts


@dataclass(frozen=True)
class Cited:
    """What a final answer cites (dagmca.metrics.citations): its sentences that make a
    claim, those that cite a section it was given, and the citations removed for naming
    none it was given."""

    claims: int
    cited: int
    removed: int


@dataclass(frozen=True)
class RunRecord:
    """One session of the eval and its scored answer."""

    arm: str
    protocol: str
    task: str
    repeat: int
    session: str
    status: str
    answer: str | None
    score: Score
    calls: int  # the arm's own: the emergence ledger's calls are counted apart
    tokens: int
    cost_usd: float
    prompt_tokens: int = 0  # of `tokens`, the prompts'
    ledger_calls: int = 0
    ledger_tokens: int = 0
    ledger_cost_usd: float = 0.0
    # the final's traced claims by origin (a dagmca.graph.ClaimOrigin's value; empty
    # when it was not traced), and claims it was split into that a budget left untraced
    origins: Mapping[str, int] = field(default_factory=dict)
    untraced: int = 0
    samples: int = 1  # a self-consistency vote's sessions: its spend is theirs summed
    words: int | None = None  # its final answer's (None: it has no final text)
    citations: Cited | None = None  # its final answer's (None: no final, or one before they were counted)
    reused: bool = False  # read back as an earlier run of the eval left it: nothing asked
    # of its spend, what another arm's session made (first-vote rests on its source's
    # first-round calls): in its cost, but counted once in the eval's spend
    borrowed_calls: int = 0
    borrowed_tokens: int = 0
    borrowed_cost_usd: float = 0.0


@dataclass(frozen=True)
class Verdict:
    """A judged pair on one task, repeat and trial, from `arm`'s side, on one criterion
    (the overall verdict, or one the judge gave beside it). `no_verdict` and
    `unjudged` pairs are kept, to be counted apart, never as ties."""

    arm: str
    baseline: str
    task: str
    repeat: int
    verdict: Outcome
    criterion: str = OVERALL
    trial: int = 0
    # the two orders were both read and disagreed: the judge's verdict moved with the
    # order the answers were shown in, and the pair counts as a tie
    split: bool = False
