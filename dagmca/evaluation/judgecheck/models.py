"""What a judge check reports: each measure with its rate, interval, size and status,
and the judge it was made on (what `--json` prints and the JudgeCheck node holds)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from dagmca.graph.schema import Strict


class CheckName(StrEnum):
    POSITION = "position"  # the share of pairs whose verdict holds when the order is swapped
    LENGTH = "length"  # the share of decided pairs won by the padded, longer answer
    REFERENCE = "reference"  # the share of pairs won by the right answer over a near miss
    SELF_PREFERENCE = "self_preference"  # the share won by the judge's own model, at equal correctness


class CheckStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    NOT_MEASURED = "not_measured"  # nothing to measure it on (one model, no decided pair)


class Check(Strict):
    """One measure: `rate` over `n` pairs with its Wilson interval, and its status
    against the guide's thresholds; `note` says what it rests on or why it is not
    measured."""

    name: CheckName
    rate: float | None
    lo: float | None
    hi: float | None
    n: int
    status: CheckStatus
    note: str = ""


class Judge(Strict):
    """The judge a check was made on: as an eval names it."""

    llm: str
    model: str
    endpoint: str | None = None
    prompt_version: str


class JudgeCheckReport(Strict):
    """A judge check: its id (stable for one judge, writer of the answers, other model
    and task set, so that running it again replaces it), the judge, the date, the
    tasks, the measures, the worst status among them, and what its requests cost."""

    id: str
    judge: Judge
    writer: str  # the model that wrote the answers the judge compared
    other_model: str | None = None
    checked_at: str
    tasks: int
    built_in: bool = False  # the built-in task set (no tasks given)
    skipped: int = 0  # tasks a spent budget left short: their pairs are not in any measure
    checks: list[Check]
    status: CheckStatus
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class CheckProjection(Strict):
    """What a check would ask, before it asks: its calls (exactly: the battery is fixed
    by the tasks) and a cost range from its prompts' sizes and replies' caps."""

    tasks: int
    built_in: bool
    reference_tasks: int
    calls: int
    judge_calls: int
    cost_usd_min: float
    cost_usd_max: float
    by_part: dict[str, int] = Field(default_factory=dict)
