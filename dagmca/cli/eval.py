"""`dagmca eval TASKS`: arms over tasks, scored or judged in pairs, with intervals,
paired tests and cost, into the terminal (or `--json`) and the graph.

Every input problem (a task line, an unknown arm or setting) is found before the
first call; a rerun with the same `--eval-id` repeats nothing finished."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from dagmca.cli import options as o
from dagmca.cli.console import noted
from dagmca.cli.eval_plan import inputs, pilot, projection, within_budget
from dagmca.cli.eval_report import (
    run_with_progress,
    show_compared,
    show_projection,
    show_report,
    show_suites,
    written,
)
from dagmca.cli.option_models import with_options
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.evaluation.options import EvalOptions, made_with, plan_eval
from dagmca.evaluation.power import DEFAULT_EFFECT
from dagmca.evaluation.report import EvalReport, RunRecord

TasksArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="JSONL of {id, question, passage?, answer?, choices?, scoring?}, or a folder of .txt (or, with "
        "--compare, result files)",
        show_default=False,
    ),
]
OutDir = Annotated[
    Path | None, typer.Option("--out", help="Folder for eval.json, eval.md and quality-cost.svg")
]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Project the eval's calls, cost and power; spend nothing (but a --pilot)"),
]
Effect = Annotated[
    float,
    typer.Option(
        "--effect",
        min=0.01,
        max=0.5,
        help="The difference to plan for: the tasks it needs at 80% power (accuracy, or win-rate points)",
    ),
]
Pilot = Annotated[
    int | None,
    typer.Option(
        "--pilot",
        min=2,
        metavar="N",
        help="With --dry-run: run the first N tasks first and take the power from their variability",
    ),
]
BudgetUSD = Annotated[
    float | None,
    typer.Option(
        "--budget-usd",
        min=0.0,
        help="Run as many tasks as the projection's upper bound fits in these dollars, and stop there",
    ),
]
Suite = Annotated[
    str | None,
    typer.Option("--suite", metavar="NAME[:N]", help="A generated suite instead of TASKS (--list-suites)"),
]
ListSuites = Annotated[
    bool, typer.Option("--list-suites", help="Name the shipped suites, their sizes and what each tests")
]
Compare = Annotated[
    bool,
    typer.Option(
        "--compare", help="Line up result files (eval --json, eval.json) of one task set; run nothing"
    ),
]
HTML = Annotated[
    Path | None,
    typer.Option("--report", metavar="FILE.html", help="Write the report as one self-contained page"),
]


# every arm sets these itself (its protocol, its size): no option for them
@o.with_settings(exclude=("protocol",))
@with_options(EvalOptions)
def eval_(
    cfg: SessionConfig,
    options: EvalOptions,
    tasks: TasksArg = None,
    store: o.Store = None,
    out_dir: OutDir = None,
    as_json: o.AsJSON = False,
    dry_run: DryRun = False,
    effect: Effect = DEFAULT_EFFECT,
    pilot_tasks: Pilot = None,
    budget_usd: BudgetUSD = None,
    suite: Suite = None,
    list_suites: ListSuites = False,
    compare: Compare = False,
    html: HTML = None,
) -> None:
    """Run arms over tasks (a task file, or a generated --suite) and report accuracy, judged
    wins, paired tests with the power they had, and cost; --compare lines up result files."""
    from dagmca.evaluation.identity import models_line, models_of
    from dagmca.llm.factory import check_backend
    from dagmca.store import resolve_store

    if list_suites:
        show_suites()
        return
    if compare:
        show_compared(tasks or [], out_dir, as_json)
        return
    found, task_set, source = inputs(tasks, suite)
    o.check_session_id(options.eval_id)
    if pilot_tasks is not None and not dry_run:
        raise UserError("--pilot is a dry run's: it runs N tasks to plan the rest", "add --dry-run")
    plan = plan_eval(options, found, task_set, source, cfg)
    if budget_usd is not None:
        sized = within_budget(plan, cfg, budget_usd, effect=effect, quiet=as_json)
        options, cfg, plan = first(options, len(sized.tasks)), sized.cfg, replace(plan, tasks=sized.tasks)
    if dry_run:
        measured = {}
        if pilot_tasks is not None:
            check_backend(cfg)
            measured = pilot(pilot_tasks, lambda n: evaluate(store, tasks, suite, first(options, n), cfg))
        show_projection(
            projection(plan, cfg, effect=effect, discordance=measured, store=resolve_store(store)), as_json
        )
        return
    check_backend(cfg)
    if not as_json:
        noted(
            f"eval {plan.eval_id}: {len(plan.tasks)} tasks x {len(plan.arms)} arms x {plan.repeats} repeats"
        )
        noted(f"models: {models_line(models_of(cfg))}")
    report = run_with_progress(
        lambda on_done: evaluate(store, tasks, suite, options, cfg, on_done), plan, as_json
    )
    written(report, out_dir, html, made_with(plan, cfg))
    if as_json:
        print(report.model_dump_json(indent=2, exclude={"results", "controls"}))
        return
    show_report(report)


def first(options: EvalOptions, n: int) -> EvalOptions:
    """The options with the eval cut to its first `n` tasks (or fewer, if it already was)."""
    return options.model_copy(update={"first": min(n, options.first or n)})


def evaluate(
    store: str | None,
    tasks: list[Path] | None,
    suite: str | None,
    options: EvalOptions,
    cfg: SessionConfig,
    on_done: Callable[[RunRecord], None] | None = None,
) -> EvalReport:
    """The eval run by the API's `Workspace.eval`, on a workspace around the store."""
    from dagmca.api.sync import in_workspace
    from dagmca.store import resolve_store

    return in_workspace(
        resolve_store(store),
        lambda ws: ws.eval(
            tasks[0] if tasks else None, suite=suite, options=options, settings=cfg, on_done=on_done
        ),
        embedder=cfg.embedder,
    )
