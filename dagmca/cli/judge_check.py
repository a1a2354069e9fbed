"""`dagmca judge-check [TASKS]`: the judge an eval would use, on trial: position, length,
reference and self-preference, each with its interval and status, into the terminal (or
`--json`) and the graph, where every eval of that judge reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import noted, out, said
from dagmca.config import SessionConfig
from dagmca.evaluation.judgecheck.models import CheckProjection, JudgeCheckReport

TasksArg = Annotated[
    Path | None,
    typer.Argument(
        help="JSONL of tasks (as `dagmca eval` takes); none: the built-in set", show_default=False
    ),
]


def size_line(p: CheckProjection) -> str:
    source = "the built-in set" if p.built_in else "the tasks given"
    return (
        f"judge check: {p.tasks} tasks from {source} ({p.reference_tasks} with a reference): {p.calls} calls "
        f"({p.judge_calls} to the judge), ${p.cost_usd_min:.4f}-{p.cost_usd_max:.4f}"
    )


def checks_table(report: JudgeCheckReport) -> Table:
    j = report.judge
    where = f" at {j.endpoint}" if j.endpoint else ""
    table = Table(
        title=f"dagmca judge-check: {j.model} ({j.llm}{where}), prompt {j.prompt_version}: "
        f"{report.status.value}",
        title_justify="left",
    )
    for name in ("check", "rate (95% CI)", "pairs", "status"):
        table.add_column(name, overflow="fold")
    for c in report.checks:
        rate = f"{c.rate:.2f} [{c.lo:.2f}, {c.hi:.2f}]" if c.rate is not None else "-"
        table.add_row(c.name.value, rate, str(c.n), c.status.value)
    return table


@o.with_settings(exclude=("protocol",))
def judge_check(
    cfg: SessionConfig,
    tasks: TasksArg = None,
    other_model: Annotated[
        str | None,
        typer.Option(
            "--other-model",
            help="A second model, on the judge's endpoint: measures whether the judge prefers its own "
            "model's answers (self-preference)",
        ),
    ] = None,
    store: o.Store = None,
    as_json: o.AsJSON = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the check's size and cost; spend nothing")
    ] = False,
) -> None:
    """Check the judge an eval would use (its --judge-* settings) with the eval's own pair
    prompt: position, length, reference and self-preference, with intervals and a status."""
    from dagmca.api.sync import in_workspace
    from dagmca.evaluation import load_tasks
    from dagmca.evaluation.judgecheck.estimate import project_check
    from dagmca.evaluation.judgecheck.running import plan_check, run_judge_check
    from dagmca.llm.factory import check_backend
    from dagmca.store import resolve_store

    plan = plan_check(load_tasks(tasks) if tasks is not None else None, other_model)
    projected = project_check(plan, cfg)
    if dry_run:
        if as_json:
            print(projected.model_dump_json(indent=2))
        else:
            said(size_line(projected))
        return
    check_backend(cfg)
    if not as_json:
        noted(size_line(projected))
    report = in_workspace(
        resolve_store(store), lambda ws: run_judge_check(ws, plan, cfg), embedder=cfg.embedder
    )
    if report.skipped:
        noted(
            f"dagmca: {report.skipped} tasks not checked: the budget is spent; rerun with a raised budget to "
            "finish them (what was asked comes from the cache)"
        )
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    out.print(checks_table(report))
    for c in report.checks:
        said(f"{c.name.value}: {c.note}")
    said(f"spent: {report.calls:,} calls, {report.tokens:,} tokens, ${report.cost_usd:.4f}; stored as "
        f"{report.id}, read by every eval of this judge")  # fmt: skip
