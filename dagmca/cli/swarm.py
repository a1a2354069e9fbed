"""`dagmca swarm TASKS`: a stream of tasks, each routed to one agent of a pool and
checked objectively (scored against a reference, or run against its tests in the
executor); routers compared on accuracy and specialization, with intervals.

Every input problem (a task line, an unknown router) is found before the first call;
the same command run again goes on where it stopped, or reads a finished swarm back
without a call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dagmca.cli import options as o
from dagmca.cli.console import noted, out, said
from dagmca.cli.option_models import with_options
from dagmca.cli.tables import Table
from dagmca.config import SessionConfig
from dagmca.errors import BuildInterrupted
from dagmca.swarm.options import SwarmOptions

if TYPE_CHECKING:
    from dagmca.swarm.loop import StreamPlan
    from dagmca.swarm.report import SwarmReport

TasksArg = Annotated[
    Path,
    typer.Argument(
        help="JSONL of reference tasks {id, type, question, answer} "
        "or code tasks {id, type, prompt, tests, entry_point}"
    ),
]
OutDir = Annotated[Path | None, typer.Option("--out", help="Folder for swarm.json and the plots")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Project the calls, tokens and cost; spend nothing")]


# What the swarm reads of the settings: its model and endpoint (every role's, the
# debate's answering), the budget, the pool's names (perspectives), the affinity router's
# temperature and the embedder of D; not a debate's shape, observers, judge or output
# caps (an agent's reply has its own). Its own --router and --agents are its options (a
# comma list of routers to compare, the pool's size), not the debate's settings of those
# names.
SETTINGS = ("llm", "budget", "perspectives", "router_temperature", "embedder")
NOT_USED = ("max_turn_tokens", "max_flag_tokens", "max_synthesis_tokens", "otel", "otel_content")


@o.with_settings(only=SETTINGS, exclude=NOT_USED)
@with_options(SwarmOptions)
def swarm(
    cfg: SessionConfig,
    options: SwarmOptions,
    tasks: TasksArg,
    store: o.Store = None,
    out_dir: OutDir = None,
    as_json: o.AsJSON = False,
    dry_run: DryRun = False,
) -> None:
    """Route a stream of checked tasks to agents that learn from their successes."""
    from dagmca.api.sync import in_workspace
    from dagmca.executor import Isolation, isolation
    from dagmca.llm.factory import check_backend
    from dagmca.store import resolve_store
    from dagmca.swarm.running import plan_swarm

    plan = plan_swarm(tasks, options, cfg)
    if dry_run:
        show_projection(plan, cfg, as_json)
        return
    check_backend(cfg)
    if not as_json:
        noted(
            f"swarm {plan.swarm_id}: {len(plan.tasks)} tasks x {len(plan.routers)} routers x {plan.repeats} "
            f"repeats, {len(plan.agents)} agents"
        )
    if any(t.is_code for t in plan.tasks) and options.unsafe_executor and isolation() is Isolation.NONE:
        noted(
            "dagmca: bubblewrap cannot start here: the executor runs code with no walls but its resource "
            "limits (see the Swarm guide's section on the executor)"
        )
    shown = Progress(len(plan.tasks) * len(plan.routers) * plan.repeats, quiet=as_json)
    try:
        report = in_workspace(
            resolve_store(store),
            lambda ws: ws.swarm(
                tasks, options=options, settings=cfg, on_attempt=shown.attempted, on_start=shown.start
            ),
            embedder=cfg.embedder,
        )
    except KeyboardInterrupt:
        raise BuildInterrupted(
            f"swarm {plan.swarm_id} interrupted: every finished attempt is kept",
            "run the same command again to go on without repeating one",
        ) from None
    if out_dir is not None:
        from dagmca.swarm.plot import write_outputs

        for path in write_outputs(report, out_dir):
            noted(f"wrote {path}")
    if report.unmade:
        noted(
            f"dagmca: {report.unmade} attempts not made: the budget is spent; rerun with a raised budget "
            "to make them"
        )
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    show_report(report)


def show_projection(plan: StreamPlan, cfg: SessionConfig, as_json: bool) -> None:
    """`--dry-run`: the calls, tokens and cost the swarm would spend at most."""
    from dagmca.swarm.estimate import project

    p = project(plan, cfg)
    if as_json:
        print(p.model_dump_json(indent=2))
        return
    said(
        f"swarm {p.swarm_id}: {p.calls:,} calls, at most {p.prompt_tokens_max:,} prompt and "
        f"{p.completion_tokens_max:,} completion tokens, at most ${p.cost_usd_max:.4f} ({p.prices}); "
        f"{p.executor_runs:,} executor runs; nothing spent"
    )


class Progress:
    """A line every ten attempts with the time left, and one for the attempts an
    earlier run made (read back, not made again); nothing with --json."""

    def __init__(self, calls: int, *, quiet: bool) -> None:
        self.calls, self.quiet = calls, quiet
        self.started, self.made, self.todo = time.monotonic(), 0, calls

    def start(self, left: int) -> None:
        self.todo = left
        if not self.quiet and left < self.calls:
            noted(f"{self.calls - left:,} attempts read back from an earlier run")

    def attempted(self, attempt: object) -> None:
        self.made += 1
        if self.quiet or (self.made % 10 and self.made != self.todo):
            return
        left = (time.monotonic() - self.started) / self.made * (self.todo - self.made)
        noted(f"[{self.made}/{self.todo}] ETA {left:.0f}s")


def show_report(report: SwarmReport) -> None:
    """The routers side by side, each one's record by agent and type, and the paired
    comparisons."""
    table = Table(title=f"dagmca swarm {report.swarm_id}", title_justify="left")
    for name in ("router", "repeats", "accuracy (95% CI)", "S (95% CI)", "S noise floor", "D", "tokens"):
        table.add_column(name)
    for r in report.routers:
        s = "-" if r.s is None else f"{r.s:.2f}" + (f" [{r.s_ci[0]:.2f}, {r.s_ci[1]:.2f}]" if r.s_ci else "")
        table.add_row(
            r.router,
            str(r.repeats),
            f"{r.accuracy:.1%} [{r.accuracy_ci[0]:.1%}, {r.accuracy_ci[1]:.1%}]",
            s,
            "-" if r.s_noise is None else f"{r.s_noise:.2f}",
            "-" if r.d is None else f"{r.d:.2f}",
            f"{r.tokens:,}",
        )
    out.print(table)
    for r in report.routers:
        matrix = Table(title=f"{r.router}: solved/attempted by agent and type", title_justify="left")
        matrix.add_column("agent")
        for t in report.types:
            matrix.add_column(t)
        for agent in report.agents:
            cells = [r.record.get(agent, {}).get(t) for t in report.types]
            matrix.add_row(agent, *(f"{c.successes}/{c.trials}" if c else "-" for c in cells))
        out.print(matrix)
    if report.comparisons:
        pairs = Table(title="paired comparisons (Holm-corrected p)", title_justify="left")
        for name in ("router", "against", "on", "better/worse", "p", "p Holm"):
            pairs.add_column(name)
        for c in report.comparisons:
            pairs.add_row(c.a, c.b, c.measure, f"{c.wins}/{c.losses}", f"{c.p:.3g}", f"{c.p_holm:.3g}")
        out.print(pairs)
