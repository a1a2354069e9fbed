"""How an evaluation runs, beside its settings: `EvalOptions`, one object that
`dagmca eval` builds from its options (each field is one, its description the help)
and `Workspace.eval` takes, so the command and the API have one default, one bound and
one check per option; and `plan_eval`, the plan both run from it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import DEFAULT_ARMS, KINDS, parse_arms
from dagmca.evaluation.consistency import DEFAULT_TEMPERATURE, Match
from dagmca.evaluation.identity import TaskSet, default_eval_id, digest, identity
from dagmca.evaluation.plan import EvalPlan
from dagmca.evaluation.scoring import DEFAULT_TOLERANCE
from dagmca.evaluation.tasks import Task
from dagmca.graph.schema import Strict

ARMS_HELP = "Comma-separated arms, each optionally with settings (mca:rounds=1,signals=false): " + "; ".join(
    f"{k.name} ({k.about})" for k in KINDS.values()
)


class EvalOptions(Strict):
    """What an evaluation runs and how it scores, judges and samples, beside the
    settings its sessions run with. `eval_id` (default: from the tasks, the arms, the
    repeats and every setting that can change an answer) is what a rerun resumes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arms: str = Field(DEFAULT_ARMS, description=ARMS_HELP)
    repeats: int = Field(1, ge=1, description="Seeds per arm and task")
    eval_id: str | None = Field(
        None, description="The eval's id; a rerun with it resumes (default: from inputs)"
    )
    tolerance: float = Field(DEFAULT_TOLERANCE, ge=0.0, description="numeric tasks: relative tolerance")
    judge_all: bool = Field(False, description="Judge reference tasks in pairs too")
    judge_trials: int = Field(1, ge=1, description="Judge calls per pair and order")
    noise_floor: bool = Field(
        False,
        description="Each arm whose samples vary against itself over every pair of repeats (needs 2 "
        "repeats or more)",
    )
    parallel: int | None = Field(
        None,
        ge=1,
        le=64,
        description="Sessions run at once (default: 1 on the local model, else the concurrency, at least 2)",
        json_schema_extra={"flag": "--parallel-sessions"},
    )
    vote_temperature: float = Field(
        DEFAULT_TEMPERATURE, ge=0.0, le=2.0, description="vote (self-consistency): its samples' temperature"
    )
    match: Match = Field(
        "tokens", description="vote: sample as many answers as match its target's tokens (default) or calls"
    )
    first: int | None = Field(
        None,
        ge=1,
        description="Run the first N tasks only, under the whole set's eval id: a later run with more "
        "(or all) goes on from them",
    )

    @field_validator("noise_floor")
    @classmethod
    def _repeated(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("repeats", 1) < 2:
            raise ValueError("a noise floor needs 2 repeats or more")
        return value


def plan_eval(
    options: EvalOptions,
    tasks: list[Task],
    task_set: TaskSet,
    source: Path | Sequence[Task],
    cfg: SessionConfig,
) -> EvalPlan:
    """The plan of an eval of `tasks` (what `task_set` names; `source`, the file or the
    tasks, is what its default id follows from) under `cfg`: its arms parsed against
    the settings, its id, and the first `options.first` tasks."""
    chosen = parse_arms(options.arms, cfg.model_dump())
    with_arms = identity(cfg, chosen, vote_temperature=options.vote_temperature, match=options.match)
    digested = digest({**with_arms, "task_set": task_set.model_dump(mode="json")})
    return EvalPlan(
        eval_id=options.eval_id or default_eval_id(source, options.arms, options.repeats, digested),
        tasks=tasks[: options.first], arms=chosen, repeats=options.repeats, tolerance=options.tolerance,
        judge_all=options.judge_all, judge_trials=options.judge_trials, noise_floor=options.noise_floor,
        parallel=options.parallel, vote_temperature=options.vote_temperature, match=options.match,
        task_set=task_set,
    )  # fmt: skip


def made_with(plan: EvalPlan, cfg: SessionConfig) -> dict[str, Any]:
    """What the plan's results are made with under `cfg` (its identity): the settings
    that can change an answer, the prompts' versions, and each arm's own."""
    return identity(cfg, plan.arms, vote_temperature=plan.vote_temperature, match=plan.match)
