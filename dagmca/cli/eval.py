"""`dagmca eval TASKS`: arms over tasks, scored or judged in pairs, with intervals,
paired tests and cost, into the terminal (or `--json`) and the graph.

Every input problem (a task line, an unknown arm or setting) is found before the
first call; a rerun with the same `--eval-id` repeats nothing finished."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dagmca.cli import options as o
from dagmca.cli.console import err, noted
from dagmca.cli.eval_plan import inputs, pilot, projection, within_budget
from dagmca.cli.eval_report import (
    run_with_progress,
    show_compared,
    show_projection,
    show_report,
    show_suites,
    written,
)
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.evaluation.arms import DEFAULT_ARMS, KINDS
from dagmca.evaluation.consistency import DEFAULT_TEMPERATURE, MATCHES
from dagmca.evaluation.power import DEFAULT_EFFECT
from dagmca.evaluation.scoring import DEFAULT_TOLERANCE

TasksArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="JSONL of {id, question, passage?, answer?, choices?, scoring?}, or a folder of .txt (or, with "
        "--compare, result files)",
        show_default=False,
    ),
]
Arms = Annotated[
    str,
    typer.Option(
        "--arms",
        help="Comma-separated arms, each optionally with settings (mca:rounds=1,signals=false): "
        + "; ".join(f"{k.name} ({k.about})" for k in KINDS.values()),
    ),
]


# every arm sets these itself (its protocol, its size): no option for them
@o.with_settings(exclude=("protocol",))
def eval_(
    cfg: SessionConfig,
    tasks: TasksArg = None,
    arms: Arms = DEFAULT_ARMS,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Seeds per arm and task")] = 1,
    eval_id: Annotated[
        str | None,
        typer.Option("--eval-id", help="The eval's id; a rerun with it resumes (default: from inputs)"),
    ] = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", min=0.0, help="numeric tasks: relative tolerance")
    ] = DEFAULT_TOLERANCE,
    judge_all: Annotated[
        bool, typer.Option("--judge-all", help="Judge reference tasks in pairs too")
    ] = False,
    judge_trials: Annotated[
        int, typer.Option("--judge-trials", min=1, help="Judge calls per pair and order")
    ] = 1,
    noise: Annotated[
        bool,
        typer.Option(
            "--noise-floor",
            help="Each arm whose samples vary against itself over every pair of repeats (needs --repeats 2+)",
        ),
    ] = False,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel-sessions",
            min=1,
            max=64,
            help="Sessions run at once (default: 1 on the local model, else --concurrency, at least 2)",
        ),
    ] = None,
    vote_temperature: Annotated[
        float,
        typer.Option(
            "--vote-temperature", min=0.0, max=2.0, help="vote (self-consistency): its samples' temperature"
        ),
    ] = DEFAULT_TEMPERATURE,
    match: Annotated[
        str,
        typer.Option(
            "--match", help="vote: sample as many answers as match its target's tokens (default) or calls"
        ),
    ] = "tokens",
    store: o.Store = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Folder for eval.json, eval.md and quality-cost.svg")
    ] = None,
    as_json: o.AsJSON = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Project the eval's calls, cost and power; spend nothing (but a --pilot)"
        ),
    ] = False,
    effect: Annotated[
        float,
        typer.Option(
            "--effect",
            min=0.01,
            max=0.5,
            help="The difference to plan for: the tasks it needs at 80% power (accuracy, or win-rate points)",
        ),
    ] = DEFAULT_EFFECT,
    pilot_tasks: Annotated[
        int | None,
        typer.Option(
            "--pilot",
            min=2,
            metavar="N",
            help="With --dry-run: run the first N tasks first and take the power from their variability",
        ),
    ] = None,
    budget_usd: Annotated[
        float | None,
        typer.Option(
            "--budget-usd",
            min=0.0,
            help="Run as many tasks as the projection's upper bound fits in these dollars, and stop there",
        ),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite", metavar="NAME[:N]", help="A generated suite instead of TASKS (--list-suites)"
        ),
    ] = None,
    list_suites: Annotated[
        bool, typer.Option("--list-suites", help="Name the shipped suites, their sizes and what each tests")
    ] = False,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare", help="Line up result files (eval --json, eval.json) of one task set; run nothing"
        ),
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option("--report", metavar="FILE.html", help="Write the report as one self-contained page"),
    ] = None,
) -> None:
    """Run arms over tasks (a task file, or a generated --suite) and report accuracy, judged
    wins, paired tests with the power they had, and cost; --compare lines up result files."""
    from dagmca.api.sync import in_workspace
    from dagmca.evaluation import parse_arms
    from dagmca.evaluation.identity import default_eval_id, digest, identity, models_line, role_models
    from dagmca.evaluation.running import EvalPlan, run_eval
    from dagmca.llm.factory import check_backend
    from dagmca.store import resolve_store

    if list_suites:
        show_suites()
        return
    if compare:
        show_compared(tasks or [], out_dir, as_json)
        return
    found, task_set, source = inputs(tasks, suite)
    values = cfg.model_dump()
    chosen = parse_arms(arms, values)
    if noise and repeats < 2:
        raise UserError("--noise-floor needs --repeats 2 or more", "add --repeats 2")
    o.check_session_id(eval_id)
    if match not in MATCHES:
        raise UserError(f"--match: {match!r} is not tokens or calls", "use --match tokens or --match calls")
    if pilot_tasks is not None and not dry_run:
        raise UserError("--pilot is a dry run's: it runs N tasks to plan the rest", "add --dry-run")
    made = identity(cfg, chosen, vote_temperature=vote_temperature, match=match)
    made_with = digest({**made, "task_set": task_set.model_dump(mode="json")})
    full_id = eval_id or default_eval_id(source, arms, repeats, made_with)
    if budget_usd is not None:
        sized = within_budget(
            found, chosen, cfg, budget_usd, repeats=repeats, judge_trials=judge_trials, judge_all=judge_all,
            effect=effect, quiet=as_json, match=match,
        )  # fmt: skip
        found, cfg = sized.tasks, sized.cfg
    plan = EvalPlan(
        eval_id=full_id, tasks=found, arms=chosen,
        repeats=repeats, tolerance=tolerance, judge_all=judge_all, judge_trials=judge_trials,
        noise_floor=noise, parallel=parallel, vote_temperature=vote_temperature, match=match,
        task_set=task_set,
    )  # fmt: skip
    if dry_run:
        measured = {}
        if pilot_tasks is not None:
            check_backend(cfg)
            measured = pilot(
                plan, pilot_tasks,
                lambda small: in_workspace(
                    resolve_store(store), lambda ws: run_eval(ws, small, cfg), embedder=cfg.embedder
                ),
            )  # fmt: skip
        show_projection(
            projection(
                found, chosen, cfg, repeats=repeats, judge_trials=judge_trials, judge_all=judge_all,
                effect=effect, discordance=measured, match=match, store=resolve_store(store),
                parallel=parallel,
            ),
            as_json,
        )  # fmt: skip
        return
    check_backend(cfg)
    if not as_json:
        err.print(f"eval {plan.eval_id}: {len(found)} tasks x {len(chosen)} arms x {repeats} repeats")
        noted(f"models: {models_line(role_models(cfg))}")
    report = run_with_progress(
        lambda on_done: in_workspace(
            resolve_store(store), lambda ws: run_eval(ws, plan, cfg, on_done=on_done), embedder=cfg.embedder
        ),
        plan, as_json,
    )  # fmt: skip
    written(report, out_dir, html, made)
    if as_json:
        print(report.model_dump_json(indent=2, exclude={"results"}))
        return
    show_report(report)
