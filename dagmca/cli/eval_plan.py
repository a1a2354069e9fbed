"""What `dagmca eval` settles before it runs: a pilot's discordance (`--pilot`), the tasks
a budget in dollars fits (`--budget-usd`), and the dry run's projection with its power."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dagmca.cli.console import noted
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.evaluation.estimate import EvalProjection, project_eval
from dagmca.evaluation.identity import TaskSet
from dagmca.evaluation.plan import EvalPlan
from dagmca.evaluation.power import Discordance, Kind
from dagmca.evaluation.report import EvalReport
from dagmca.evaluation.tasks import Task


@dataclass
class Sized:
    """The tasks the eval will run and the settings it runs them under (a budget in
    dollars becomes its cost cap), and what a pilot measured."""

    tasks: list[Task]
    cfg: SessionConfig
    discordance: dict[Kind, Discordance] = field(default_factory=dict)


def within_budget(
    plan: EvalPlan, cfg: SessionConfig, budget_usd: float, *, effect: float, quiet: bool
) -> Sized:
    """The plan's first tasks whose projected upper bound fits `budget_usd`, with its
    power said; the budget also caps the eval's spend, so it stops there whatever it meets."""
    from dagmca.evaluation.planning import fit_budget, planned_power

    found, arms = plan.tasks, plan.arms
    n = fit_budget(
        found, arms, cfg, budget_usd, repeats=plan.repeats, judge_trials=plan.judge_trials,
        judge_all=plan.judge_all, match=plan.match,
    )  # fmt: skip
    if n == 0:
        one = project_eval(
            found[:1], arms, cfg, repeats=plan.repeats, judge_trials=plan.judge_trials,
            judge_all=plan.judge_all, match=plan.match,
        )  # fmt: skip
        raise UserError(
            f"--budget-usd {budget_usd:g}: not even one task fits (one is projected at up to "
            f"${one.cost_usd_max:.4f})",
            "raise --budget-usd, or run fewer arms or repeats",
        )
    cap = budget_usd if cfg.max_cost_usd is None else min(cfg.max_cost_usd, budget_usd)
    sized = Sized(found[:n], cfg.model_copy(update={"max_cost_usd": cap}))
    if not quiet:
        rows = planned_power(
            sized.tasks, arms, plan.repeats, judge_all=plan.judge_all, effect=effect, seed=cfg.seed
        )
        said = "; ".join(
            f"{r.kind}: smallest difference found 80% of the time {r.mde:.2f}" if r.mde is not None
            else f"{r.kind}: too few tasks to find any difference"
            for r in rows
        )  # fmt: skip
        noted(f"budget ${budget_usd:g}: {n} of {len(found)} tasks fit (projected at most); {said}")
    return sized


def pilot(n: int, run: Callable[[int], EvalReport]) -> dict[Kind, Discordance]:
    """Run the plan's first `n` tasks (under the plan's own id, so the full eval reads
    them back) and take the discordance they show."""
    from dagmca.evaluation.planning import pilot_discordance

    if n < 2:
        raise UserError("--pilot needs 2 tasks or more", "e.g. --pilot 5")
    return pilot_discordance(run(n))


def projection(
    plan: EvalPlan, cfg: SessionConfig, *, effect: float, discordance: dict[Kind, Discordance], store: str
) -> EvalProjection:
    from dagmca.evaluation.estimate import time_ranges
    from dagmca.evaluation.planning import planned_power
    from dagmca.evaluation.running import default_parallel

    found, arms, repeats = plan.tasks, plan.arms, plan.repeats
    p = project_eval(
        found, arms, cfg, repeats=repeats, judge_trials=plan.judge_trials, judge_all=plan.judge_all,
        match=plan.match,
    )  # fmt: skip
    rows = planned_power(
        found, arms, repeats, judge_all=plan.judge_all, effect=effect, discordance=discordance, seed=cfg.seed
    )
    sessions = plan.parallel or default_parallel(cfg)
    latency = measured_latency(store, cfg) if cfg.llm == "openai" else None
    notes = (
        ["time: no call to this model is in the store yet, so its latency is unknown"]
        if cfg.llm == "openai" and latency is None
        else []
    )
    return p.model_copy(
        update={"power": rows, "time": time_ranges(p, cfg, latency, sessions), "notes": notes}
    )


RECENT_SESSIONS = 30  # sessions whose call log gives an endpoint's latency


def measured_latency(location: str, cfg: SessionConfig) -> float | None:
    """The median latency of the debate model's calls (not answered from the cache) in
    the store's most recent sessions; None without a store or a call."""
    import statistics

    from dagmca.graph import ModelRole
    from dagmca.llm.factory import model_name
    from dagmca.store import open_store
    from dagmca.store.target import is_bolt_uri

    if not is_bolt_uri(location) and not Path(location).exists():
        return None
    model = model_name(cfg.role(ModelRole.DEBATE))
    with open_store(location) as st:
        if not st.is_initialised():
            return None
        seen = [
            c.latency_s
            for s in st.sessions()[-RECENT_SESSIONS:]
            for c in st.calls(s.id)
            if c.model == model and not c.cache_hit and c.latency_s > 0
        ]
    return statistics.median(seen) if seen else None


def inputs(tasks: list[Path] | None, suite: str | None) -> tuple[list[Task], TaskSet, Path | list[Task]]:
    """The eval's tasks, what they are (a file's or a suite's identity), and what its
    default id follows from (the file, or the suite's tasks): exactly one of TASKS or
    --suite."""
    from dagmca.evaluation import load_tasks
    from dagmca.evaluation.identity import task_set

    if suite is not None and tasks:
        raise UserError("give TASKS or --suite, not both", "drop one")
    if suite is not None:
        from dagmca.evaluation.suites import load_suite

        made, identity = load_suite(suite)
        return made, identity, made
    if not tasks:
        raise UserError(
            "no tasks: give a TASKS file or --suite NAME", "dagmca eval --list-suites names the suites"
        )
    if len(tasks) > 1:
        raise UserError(
            f"one TASKS file or folder, not {len(tasks)}",
            "to line up result files: dagmca eval --compare A.json B.json",
        )
    found = load_tasks(tasks[0])
    return found, task_set(found, path=tasks[0]), tasks[0]
