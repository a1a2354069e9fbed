"""`dagmca swarm TASKS`: a stream of tasks, each routed to one agent of a pool and
checked objectively (scored against a reference, or run against its tests in the
executor); routers compared on accuracy and specialization, with intervals.

Every input problem (a task line, an unknown router) is found before the first call;
the same command run again goes on where it stopped, or reads a finished swarm back
without a call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import noted, out, said
from dagmca.config import SessionConfig
from dagmca.errors import BuildInterrupted


@o.with_settings(exclude=("protocol", "router", "agents", "router_temperature"))
def swarm(
    cfg: SessionConfig,
    tasks: Annotated[
        Path,
        typer.Argument(
            help="JSONL of reference tasks {id, type, question, answer} "
            "or code tasks {id, type, prompt, tests, entry_point}"
        ),
    ],
    agents: Annotated[int, typer.Option("--agents", min=2, max=64, help="Agents in the pool")] = 4,
    router: Annotated[
        str,
        typer.Option(
            "--router",
            help="affinity, random, round-robin, greedy, ucb, "
            "thompson, or a comma list to compare on the same stream",
        ),
    ] = "affinity",
    context_examples: Annotated[
        int, typer.Option("--context-examples", min=0, help="Solved examples in a prompt, at most")
    ] = 4,
    context_tokens: Annotated[
        int, typer.Option("--context-tokens", min=0, help="Tokens of examples in a prompt, at most")
    ] = 1500,
    negatives: Annotated[int, typer.Option("--negatives", min=0, help="Failed examples shown too")] = 0,
    weighting: Annotated[
        Literal["type", "recency"],
        typer.Option("--weighting", help="type: same type first; recency: newest first"),
    ] = "type",
    router_temperature: Annotated[
        float, typer.Option("--router-temperature", min=0.001, help="The affinity softmax's temperature")
    ] = 0.05,
    snapshot_every: Annotated[
        int, typer.Option("--snapshot-every", min=1, help="S, D and F every M tasks")
    ] = 20,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Runs per router, seeded apart")] = 1,
    memory: Annotated[
        Literal["none", "store"],
        typer.Option(
            "--memory",
            help="store: routers start from the persistent agents' records by type (debates' and "
            "earlier swarms'); none: from nothing, so routers compare on equal terms",
        ),
    ] = "none",
    store: o.Store = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for swarm.json and the plots")] = None,
    as_json: o.AsJSON = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Project the calls, tokens and cost; spend nothing")
    ] = False,
    unsafe_executor: Annotated[
        bool,
        typer.Option(
            "--unsafe-executor",
            help="Run code tasks even where bubblewrap cannot start (the code then has no walls but its "
            "resource limits)",
        ),
    ] = False,
) -> None:
    """Route a stream of checked tasks to agents that learn from their successes."""
    from dagmca.api.sync import in_workspace
    from dagmca.executor import Isolation, isolation
    from dagmca.llm.factory import check_backend
    from dagmca.store import resolve_store
    from dagmca.swarm.agents import ContextOptions
    from dagmca.swarm.estimate import project
    from dagmca.swarm.routers import parse_routers
    from dagmca.swarm.running import plan_for, swarm_in
    from dagmca.swarm.tasks import load_stream

    found = load_stream(tasks)
    routers = parse_routers(router)
    context = ContextOptions(
        examples=context_examples, max_tokens=context_tokens, negatives=negatives, weighting=weighting
    )
    plan = plan_for(
        found,
        tasks.read_text(encoding="utf-8"),
        cfg,
        agents=agents,
        routers=routers,
        repeats=repeats,
        snapshot_every=snapshot_every,
        context=context,
        temperature=router_temperature,
        memory=memory,
    )
    calls = len(found) * len(routers) * repeats
    if dry_run:
        p = project(plan, cfg)
        if as_json:
            print(p.model_dump_json(indent=2))
        else:
            said(
                f"swarm {p.swarm_id}: {p.calls:,} calls, at most {p.prompt_tokens_max:,} prompt and "
                f"{p.completion_tokens_max:,} completion tokens, at most ${p.cost_usd_max:.4f} ({p.prices}); "
                f"{p.executor_runs:,} executor runs; nothing spent"
            )
        return
    check_backend(cfg)
    if not as_json:
        noted(
            f"swarm {plan.swarm_id}: {len(found)} tasks x {len(routers)} routers x {repeats} repeats, "
            f"{len(plan.agents)} agents"
        )
    if any(t.is_code for t in found) and unsafe_executor and isolation() is Isolation.NONE:
        noted(
            "dagmca: bubblewrap cannot start here: the executor runs code with no walls but its resource "
            "limits (see the Swarm guide's section on the executor)"
        )
    started, made, todo = time.monotonic(), [0], [calls]

    def start(left: int) -> None:
        todo[0] = left
        if not as_json and left < calls:
            noted(f"{calls - left:,} attempts read back from an earlier run")

    def progress(attempt: object) -> None:
        made[0] += 1
        if as_json or (made[0] % 10 and made[0] != todo[0]):
            return
        left = (time.monotonic() - started) / made[0] * (todo[0] - made[0])
        noted(f"[{made[0]}/{todo[0]}] ETA {left:.0f}s")

    try:
        report = in_workspace(
            resolve_store(store),
            lambda ws: swarm_in(
                ws, plan, cfg, on_attempt=progress, on_start=start, unsafe_executor=unsafe_executor
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
            matrix.add_row(agent, *(f"{c[1]}/{c[0]}" if c else "-" for c in cells))
        out.print(matrix)
    if report.comparisons:
        pairs = Table(title="paired comparisons (Holm-corrected p)", title_justify="left")
        for name in ("router", "against", "on", "better/worse", "p", "p Holm"):
            pairs.add_column(name)
        for c in report.comparisons:
            pairs.add_row(c.a, c.b, c.measure, f"{c.wins}/{c.losses}", f"{c.p:.3g}", f"{c.p_holm:.3g}")
        out.print(pairs)
