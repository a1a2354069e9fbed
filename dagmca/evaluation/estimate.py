"""What an evaluation would spend, before it spends anything: every (arm, task) session
projected as `dagmca estimate` projects a run, times the repeats, each arm by its own
rule. A self-consistency vote takes as many samples as match its target's spend on the
task by `--match` (tokens: the target's tokens over a sample's; calls: its calls over a
sample's), so its range runs from the fewest samples (the least target over the largest
sample) times a sample's fewest calls to the most (the largest target over the least
sample) times a sample's most. first-vote reads each first-round answer
of its source by one short-answer call, a call per leaf agent. Each traced arm's
control (the single arm's answer traced against its sources) costs what the ledger
adds to a single session: what the single arm's session projects with its final traced
less what it projects without. The judge's calls (two per pair of arms, task, repeat and
trial) are counted, not priced."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from pydantic import Field

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import Arm, vote_for
from dagmca.evaluation.consistency import MAX_SAMPLES, Match
from dagmca.evaluation.judging import ORDERS
from dagmca.evaluation.plan import arm_config, control_arm, control_settings, traced_arms
from dagmca.evaluation.power import PowerRow
from dagmca.evaluation.tasks import Task
from dagmca.graph import ModelRole
from dagmca.graph.schema import Strict

if TYPE_CHECKING:
    from dagmca.debate.estimate import Projection


class ArmProjection(Strict):
    arm: str
    sessions: int
    calls_min: int
    calls_max: int
    cost_usd_min: float
    cost_usd_max: float
    rule: str = ""  # how the arm is sized: its own sessions, a vote by --match, first-vote's reads
    # of its calls, those another arm makes (first-vote's first-round answers are its
    # source's): in its cost, counted once in the eval's total
    shared: int = 0


class TimeRange(Strict):
    """How long the eval would take on a backend, from its calls and a latency: measured
    (an endpoint's, from the store's call log) or published (the bundled model's)."""

    where: str
    seconds_min: float
    seconds_max: float
    basis: str


class EvalProjection(Strict):
    arms: list[ArmProjection]
    judge_calls: int
    calls_min: int
    calls_max: int
    cost_usd_min: float
    cost_usd_max: float
    # each traced arm's ledger control: the single arm's answers traced against its sources
    controls: list[ArmProjection] = Field(default_factory=list)
    # the smallest effect each kind of comparison can find at the planned size (dry runs)
    power: list[PowerRow] = Field(default_factory=list)
    time: list[TimeRange] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Spend:
    """One session's projected spend: calls, tokens and dollars, least and most."""

    calls: tuple[int, int]
    tokens: tuple[int, int]
    cost: tuple[float, float]

    @classmethod
    def of(cls, p: Projection) -> Spend:
        tokens = (
            int(p.prompt_tokens.min + p.completion_tokens.min),
            int(p.prompt_tokens.max + p.completion_tokens.max),
        )
        return cls((int(p.calls.min), int(p.calls.max)), tokens, (p.cost_usd.min, p.cost_usd.max))


def _project(cfg: SessionConfig, task: Task) -> Projection:
    from dagmca.debate.estimate import project, role_pricing  # the pipeline, only when asked
    from dagmca.llm.factory import model_name
    from dagmca.llm.prices import resolve_prices

    model = model_name(cfg)
    return project(cfg, task.passage or "", resolve_prices(cfg, model), model, role_pricing(cfg), asked=True)


def _samples(match: Match, target: Spend, sample: Spend) -> tuple[int, int]:
    """The fewest and most samples a vote takes, as `samples_for` sizes it from the
    target's spend and its first sample's: the least target over the largest sample, and
    the largest target over the least. By calls the two are close; by tokens far apart,
    as a session's tokens range widely before it runs (its replies may be a word or their
    cap), and the projection says only what it knows."""
    low_t, high_t = target.tokens if match == "tokens" else target.calls
    low_s, high_s = sample.tokens if match == "tokens" else sample.calls

    def clamp(x: float) -> int:
        return max(1, min(MAX_SAMPLES, round(x)))

    return clamp(low_t / max(1, high_s)), clamp(high_t / max(1, low_s))


def _extraction(cfg: SessionConfig, task: Task, leaves: int) -> Spend:
    """first-vote's reads of one task: a short-answer call per leaf agent's first answer,
    its prompt the passage, the question and the answer, its reply a few words."""
    from dagmca.llm.factory import model_name
    from dagmca.llm.prices import resolve_prices
    from dagmca.llm.tokens import TokenCounter

    final = cfg.role(ModelRole.FINAL)
    prices = resolve_prices(final, model_name(final))
    quoted = TokenCounter().count(f"{task.passage or ''}\n{task.question}")
    low, high = leaves * (quoted + 200), leaves * (quoted + 200 + cfg.turn_tokens())
    per = (prices.per_1k_prompt, prices.per_1k_completion)
    cost = (
        (low * per[0] + leaves * per[1]) / 1000,
        (high * per[0] + leaves * cfg.flag_tokens() * per[1]) / 1000,
    )
    return Spend((leaves, leaves), (low, high + leaves * cfg.flag_tokens()), cost)


def _control(lone: SessionConfig, traced: SessionConfig, task: Task) -> Spend:
    """One control: what tracing the lone agent's final adds to its session, with the
    traced arm's ledger settings."""
    with_trace = Spend.of(_project(control_settings(lone, traced), task))
    without = Spend.of(_project(lone.model_copy(update={"ledger": "off"}), task))

    def less(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
        return max(0.0, a[0] - b[0]), max(0.0, a[1] - b[1])

    calls, tokens = less(with_trace.calls, without.calls), less(with_trace.tokens, without.tokens)
    return Spend(
        (int(calls[0]), int(calls[1])), (int(tokens[0]), int(tokens[1])), less(with_trace.cost, without.cost)
    )


def _controls(tasks: list[Task], arms: list[Arm], base: SessionConfig, repeats: int) -> list[ArmProjection]:
    """Each traced arm's controls, when there is a single arm to trace."""
    single = control_arm(arms)
    if single is None:
        return []
    lone = arm_config(single, base)
    rows = []
    for arm in traced_arms(arms, base):
        own = arm_config(arm, base)
        each = [_control(lone, own, t) for t in tasks]
        rows.append(
            ArmProjection(
                arm=arm.name, sessions=len(tasks) * repeats,
                calls_min=sum(s.calls[0] for s in each) * repeats,
                calls_max=sum(s.calls[1] for s in each) * repeats,
                cost_usd_min=sum(s.cost[0] for s in each) * repeats,
                cost_usd_max=sum(s.cost[1] for s in each) * repeats,
                rule=f"{single.name}'s answers traced against {arm.name}'s sources",
            )
        )  # fmt: skip
    return rows


def project_eval(
    tasks: list[Task],
    arms: list[Arm],
    base: SessionConfig,
    *,
    repeats: int = 1,
    judge_trials: int = 1,
    judge_all: bool = False,
    match: Match = "tokens",
) -> EvalProjection:
    values = base.model_dump()
    rows: list[ArmProjection] = []
    spent: dict[tuple[str, str], Spend] = {}  # (arm, task) -> one session's projection
    for arm in sorted(arms, key=lambda a: a.kind.matched_to is not None):
        calls, cost = [0, 0], [0.0, 0.0]
        shared = 0
        cfg = SessionConfig.model_validate(arm.settings(values, base.seed))
        rule = "its own sessions"
        for task in tasks:
            target = spent.get((str(arm.kind.matched_to), task.id))
            if arm.kind.derived:
                source = SessionConfig.model_validate(
                    next(a for a in arms if a.name == arm.kind.matched_to).settings(values, base.seed)
                )
                leaves = len(source.tree().leaves)
                one, n = _extraction(source, task, leaves), (1, 1)
                shared += leaves
                rule = "its source's first-round answers, each read by a short-answer call"
            elif arm.kind.sampled:
                assert target is not None
                one = Spend.of(_project(cfg, task))
                n = _samples(match, target, one)
                rule = f"samples matched by {match}"
            else:
                extra = vote_for(target.calls[1]) if target is not None else {}
                sized = SessionConfig.model_validate({**cfg.model_dump(), **extra})
                one = Spend.of(_project(sized, task))
                n = (1, 1)
                if sized.ledger != "off":  # a vote is sized from its target's own spend, not its tracing
                    spent[(arm.name, task.id)] = Spend.of(
                        _project(sized.model_copy(update={"ledger": "off"}), task)
                    )
            spent.setdefault((arm.name, task.id), one)
            calls = [calls[0] + n[0] * one.calls[0], calls[1] + n[1] * one.calls[1]]
            cost = [cost[0] + n[0] * one.cost[0], cost[1] + n[1] * one.cost[1]]
            if arm.kind.sampled and task.judged and n[1] > 1:  # universal self-consistency's pick
                calls[1] += 1
        rows.append(
            ArmProjection(
                arm=arm.name, sessions=len(tasks) * repeats, calls_min=(calls[0] + shared) * repeats,
                calls_max=(calls[1] + shared) * repeats, cost_usd_min=cost[0] * repeats,
                cost_usd_max=cost[1] * repeats, rule=rule, shared=shared * repeats,
            )
        )  # fmt: skip
    judged = sum(1 for t in tasks if t.judged or judge_all)
    compared = [a for a in arms if not a.kind.derived]  # first-vote has no final to judge
    judge_calls = judged * repeats * judge_trials * len(ORDERS) * len(list(combinations(compared, 2)))
    order = [a.name for a in arms]
    rows.sort(key=lambda r: order.index(r.arm))
    controls = _controls(tasks, arms, base, repeats)
    every = [*rows, *controls]
    return EvalProjection(
        arms=rows,
        controls=controls,
        judge_calls=judge_calls,
        calls_min=sum(r.calls_min - r.shared for r in every) + judge_calls,
        calls_max=sum(r.calls_max - r.shared for r in every) + judge_calls,
        cost_usd_min=sum(r.cost_usd_min for r in every),
        cost_usd_max=sum(r.cost_usd_max for r in every),
    )


# the bundled model, on a quiet machine: seconds a call, from the default command's runs
# (docs/development/benchmarks.md, "The default command on the local model")
LOCAL_SECONDS = (4.7, 9.3)


def time_ranges(
    p: EvalProjection, cfg: SessionConfig, latency_s: float | None, parallel: int
) -> list[TimeRange]:
    """How long the projected calls take: on the bundled model one call at a time, at its
    published seconds a call; on an endpoint at its latency measured in the store's call
    log, from every call in flight at once (`cfg.concurrency`) down to one per session run
    at once (`parallel`: a session's calls mostly wait on each other)."""
    if cfg.llm == "local":
        lo, hi = LOCAL_SECONDS
        basis = "the bundled model's seconds a call on a quiet machine, one call at a time (benchmarks page)"
        return [
            TimeRange(
                where="bundled model", seconds_min=p.calls_min * lo, seconds_max=p.calls_max * hi, basis=basis
            )
        ]
    if cfg.llm == "openai" and latency_s is not None:
        fast = p.calls_min * latency_s / max(1, cfg.concurrency)
        slow = p.calls_max * latency_s / max(1, parallel)
        basis = f"its median latency in the store's call log, {latency_s:.2f} s a call"
        return [TimeRange(where="endpoint", seconds_min=fast, seconds_max=slow, basis=basis)]
    return []
