"""`dagmca run PASSAGE --samples N`: the passage debated N times as one study, a line per
sample as it ends, then which findings hold across them. Killed or stopped, the same
command goes on where it was (the study's id, and so its sessions', come from the
passage and the settings). `--dry-run` projects one session's cost N times and the
alignment's bound, spending nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from dagmca.cli import options as o
from dagmca.cli.console import noted, said
from dagmca.cli.findings import sample_line, show_report, tell_estimate
from dagmca.config import SessionConfig
from dagmca.debate.estimate import Projection
from dagmca.errors import BuildInterrupted, UserError
from dagmca.graph import SessionStatus
from dagmca.stability.estimate import pairs_bound
from dagmca.stability.samples import VARIES, sample_settings
from dagmca.stability.study import SamplePlan

if TYPE_CHECKING:
    from dagmca.stability.models import SampleInfo


def plan_of(
    samples: int, vary: str, models: str | None, temperatures: str | None, study: str | None, candidates: int
) -> SamplePlan:
    """The study's plan from the command's options (each checked: one line when wrong)."""
    if vary not in VARIES:
        raise UserError(
            f"--vary: {vary!r} is not seed, temperature or model", "use --vary seed, temperature or model"
        )
    o.check_session_id(study)
    try:
        temps = [float(t) for t in temperatures.split(",")] if temperatures else []
    except ValueError:
        raise UserError(
            f"--temperatures: {temperatures!r} is not a list of numbers", "e.g. 0.2,0.7,1.0"
        ) from None
    listed = [m.strip() for m in models.split(",") if m.strip()] if models else []
    return SamplePlan(
        samples=samples, vary=vary, models=listed, temperatures=temps, study=study,
        per_member=candidates,
    )  # fmt: skip


def show_dry_run(cfg: SessionConfig, plan: SamplePlan, one: Projection) -> None:
    """One session's projection N times, and the alignment's bound."""
    sample_settings(cfg, plan.samples, plan.vary, models=plan.models, temperatures=plan.temperatures)
    n = plan.samples
    said(
        f"projected for {n} samples: {n * one.calls.min:,.0f}-{n * one.calls.max:,.0f} calls, "
        f"${n * one.cost_usd.min:.4f}-${n * one.cost_usd.max:.4f} (one session's projection, {n} times; "
        "`dagmca estimate` for the detail)"
    )
    said(
        f"then the alignment: at most {2 * pairs_bound(n, 1, plan.per_member):,} judge calls per tension or "
        f"claim a session holds ({plan.per_member} candidates a member, in every other sample, both orders); "
        "projected exactly before its first call"
    )


def run_samples(
    cfg: SessionConfig, text: str, asked: str | None, plan: SamplePlan, location: str, quiet: bool
) -> None:
    """The study through the API, then its report; exit 4 when a sample ended degraded."""
    from dagmca.api.sync import in_workspace
    from dagmca.llm.factory import check_backend
    from dagmca.store import open_store

    configs = sample_settings(
        cfg, plan.samples, plan.vary, models=plan.models, temperatures=plan.temperatures
    )
    for own in configs if plan.vary == "model" else configs[:1]:
        check_backend(own)

    def done(info: SampleInfo) -> None:
        if not quiet:
            noted(sample_line(info, plan.samples))

    with open_store(location, create=True) as graph_store:
        graph_store.init_schema()
        try:
            report = in_workspace(
                graph_store,
                lambda ws: ws.run_samples(
                    text or None,
                    question=asked,
                    samples=plan.samples,
                    vary=plan.vary,
                    models=plan.models,
                    temperatures=plan.temperatures,
                    study=plan.study,
                    candidates=plan.per_member,
                    settings=cfg,
                    on_done=done,
                    on_estimate=None if quiet else tell_estimate,
                ),
                embedder=cfg.embedder,
            )
        except KeyboardInterrupt:
            raise BuildInterrupted(
                "the samples were interrupted: every finished call is kept",
                "run the same command again to go on without repeating a finished call",
            ) from None
    show_report(report, as_json=False)
    if any(s.status == SessionStatus.DEGRADED for s in report.samples):
        raise typer.Exit(o.DEGRADED_EXIT)
