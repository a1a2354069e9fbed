"""An evaluation's plan: what to run (tasks, arms, repeats and how each is scored,
judged and sampled), and what follows from it before anything runs: the temperature
each arm answers at, and so which arms' samples vary (those get a noise floor), and
which arms' ledgers get a control, traced under what settings."""

from __future__ import annotations

from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.consistency import DEFAULT_TEMPERATURE, Match
from dagmca.evaluation.identity import TaskSet
from dagmca.evaluation.scoring import DEFAULT_TOLERANCE
from dagmca.evaluation.tasks import Task
from dagmca.graph import ModelRole


@dataclass(frozen=True)
class EvalPlan:
    """What to run: `judge_all` judges reference tasks in pairs too; `noise_floor`
    judges (or scores) each arm whose samples vary against itself over its repeats."""

    eval_id: str
    tasks: list[Task]
    arms: list[Arm]
    repeats: int = 1
    tolerance: float = DEFAULT_TOLERANCE
    judge_all: bool = False
    judge_trials: int = 1
    noise_floor: bool = False
    parallel: int | None = None  # sessions at once (default: `default_parallel`)
    vote_temperature: float = DEFAULT_TEMPERATURE  # the self-consistency samples'
    match: Match = "tokens"  # what a vote's samples are matched to its target by
    task_set: TaskSet | None = None  # what the tasks are, as the report names them


def arm_config(arm: Arm, base: SessionConfig) -> SessionConfig:
    """The settings an arm's sessions run with (its seed the base's)."""
    return SessionConfig.model_validate(arm.settings(base.model_dump(), base.seed))


def temperature_of(arm: Arm, base: SessionConfig, plan: EvalPlan) -> float:
    """The temperature an arm's debaters answered at: a vote's samples', else the debate
    role's under the arm's settings (a `[roles.debate] temperature` over the session's)."""
    if arm.kind.sampled:
        return plan.vote_temperature
    return arm_config(arm, base).role(ModelRole.DEBATE).temperature


def varying(plan: EvalPlan, base: SessionConfig) -> list[str]:
    """The arms whose samples vary from repeat to repeat: a sampled vote at a
    temperature above 0, an arm whose debaters answer above 0, and an arm read from
    one of those (first-vote reads its source's sessions)."""
    hot = {a.name for a in plan.arms if not a.kind.derived and temperature_of(a, base, plan) > 0}
    return [a.name for a in plan.arms if a.name in hot or (a.kind.derived and str(a.kind.matched_to) in hot)]


def control_arm(arms: list[Arm]) -> Arm | None:
    """The arm whose answers are the ledger's control: the first `single` arm."""
    return next((a for a in arms if a.kind.name == "single"), None)


def traced_arms(arms: list[Arm], base: SessionConfig) -> list[Arm]:
    """The arms whose finals the ledger traces, and so that get a control: every arm
    with its own sessions and final answers (not a vote's samples, not first-vote's
    reads, not the lone agent itself) whose settings turn the ledger on."""
    return [
        a
        for a in arms
        if a.kind.name != "single"
        and not a.kind.sampled
        and not a.kind.derived
        and arm_config(a, base).ledger_mode() != "off"
    ]


def control_settings(lone: SessionConfig, traced: SessionConfig) -> SessionConfig:
    """The lone agent's settings with the traced session's ledger (its final traced as
    `final` is), and replies read back from the response cache: a control cut short
    replays what it finished. (The arms do not read the cache, so that no arm is answered
    with another's reply; the control is a measurement, as the ledger is.)"""
    return SessionConfig.model_validate(
        {
            **lone.model_dump(),
            "ledger": "final",
            "ledger_max_claims": traced.ledger_max_claims,
            "ledger_prefilter": traced.ledger_prefilter,
            "ledger_candidates": traced.ledger_candidates,
            "cache": True,
        }
    )
