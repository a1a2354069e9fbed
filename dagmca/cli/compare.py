"""`dagmca compare`: protocols side by side on one passage, model and seed.

Like `dagmca run`, it imports the pipeline inside the command."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import err, out
from dagmca.cli.progress import progress
from dagmca.config import SessionConfig
from dagmca.errors import Interrupted, UserError
from dagmca.evaluation.arms import matched_vote as vote_size
from dagmca.llm.factory import check_backend
from dagmca.metrics.ledger import LedgerShares
from dagmca.passage import read_passage, title_of
from dagmca.reports.models import MCAReport
from dagmca.store import resolve_store

if TYPE_CHECKING:
    from dagmca.api import RunResult, Workspace

# What a comparison holds fixed so that only the protocol differs: no observers and
# no branches (they would add calls that are not the protocol's), and no reads from
# the response cache (an arm answered from it would show no cost and no time).
# Arms are compared, so none may remember another: their agents start from zero.
ARM_SETTINGS: dict[str, Any] = {
    "monitor_every": "off", "max_branches": 0, "cache": False, "agent_memory": "session",
}  # fmt: skip


@dataclass(frozen=True)
class ArmSpec:
    """An arm of a comparison: its name (the column, and the session id's suffix) and
    the protocol it runs. `matched`: its size is set from the mca arm's calls."""

    name: str
    protocol: str
    about: str
    matched: bool = False


ARMS = {
    a.name: a
    for a in (
        ArmSpec("mca", "mca", "bottom-up rounds"),
        ArmSpec("decompose", "decompose", "the top-down baseline"),
        ArmSpec("vote", "ensemble", "independent answers and a majority vote, matched to mca's calls", True),
        ArmSpec("massgen", "vote", "MassGen-style answers and votes (--protocol vote)"),
        ArmSpec("ensemble", "ensemble", "independent answers, one vote each, the winner synthesizes"),
    )
}


def matched_vote(mca: MCAReport) -> dict[str, Any]:
    """Settings of the compute-matched vote baseline: as many calls as the MCA arm made,
    spent on independent answers, one majority vote per voter, and the winner's final
    answer (self-consistency). C calls = n answers + (C - 1 - n) votes + 1."""
    return vote_size(mca.summary_metrics.total_llm_calls)


@dataclass
class Arm:
    spec: ArmSpec
    session: str
    report_path: Path
    report: MCAReport
    wall_s: float
    tokens: int
    ledger: LedgerShares | None = None  # its final's claims by origin: the arm's novelty

    def row(self) -> dict[str, Any]:
        r = self.report
        shares = self.ledger
        return {
            "arm": self.spec.name,
            "protocol": r.protocol,
            "session": self.session,
            "llm_calls": r.summary_metrics.total_llm_calls,
            "tokens": self.tokens,
            "wall_time_s": round(self.wall_s, 2),
            "rounds": r.convergence.rounds_used,
            "converged": r.convergence.converged,
            "lateral_revision_rate": r.summary_metrics.lateral_revision_rate,
            "mean_sibling_similarity": r.summary_metrics.mean_sibling_similarity,
            "final_length_words": r.summary_metrics.final_length_words,
            "claims": shares.claims if shares else None,
            "passage": shares.passage if shares else None,
            "single": shares.single if shares else None,
            "recombined": shares.recombined if shares else None,
            "emergent": shares.emergent if shares else None,
            "integrator": shares.integrator if shares else None,
            "inferred": shares.inferred if shares else None,
            "unsupported": shares.unsupported if shares else None,
            "report": str(self.report_path),
        }


async def collect(ws: Workspace, spec: ArmSpec, result: RunResult, wall_s: float) -> Arm:
    """One arm's numbers: its main debate's report, the tokens of its calls, and its
    final's claims by origin."""
    path = result.reports / "mca_report.json"
    report = MCAReport.model_validate_json(path.read_text(encoding="utf-8"))
    main = f"{result.id}/main"
    calls = await ws.calls(result.id)
    tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls if c.debate == main)
    ledger = (await ws.claims(result.id)).final
    return Arm(spec, result.id, path, report, wall_s, tokens, ledger)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(f"{v:.2f}" for v in value) or "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


LABELS = {
    "protocol": "protocol",
    "session": "session",
    "llm_calls": "LLM calls",
    "tokens": "tokens",
    "wall_time_s": "wall time (s)",
    "rounds": "rounds",
    "converged": "converged",
    "lateral_revision_rate": "lateral revision rate",
    "mean_sibling_similarity": "mean sibling similarity per round",
    "final_length_words": "final length (words)",
    "claims": "final's claims (emergence ledger)",
    "passage": "passage: the passage states it",
    "single": "single: a specialist's turn states it",
    "recombined": "recombined: parts from 2+ specialists, together all of it",
    "emergent": "emergent: follows from 2+ specialists' points",
    "integrator": "integrator: only a coordinator or the root states it",
    "inferred": "inferred: follows from the passage or 1 specialist",
    "unsupported": "unsupported: follows from nothing said",
}


def compare_table(arms: list[Arm]) -> Table:
    table = Table(title="dagmca compare", title_justify="left")
    table.add_column("", style="bold cyan", no_wrap=True)
    for arm in arms:
        table.add_column(arm.spec.name, overflow="fold")
    rows = [arm.row() for arm in arms]
    for key, label in LABELS.items():
        table.add_row(label, *(_fmt(r[key]) for r in rows))
    return table


def _arms(protocols: str) -> list[ArmSpec]:
    names = [p.strip() for p in protocols.split(",") if p.strip()]
    unknown = [p for p in names if p not in ARMS]
    if unknown:
        raise UserError(f"--protocols: unknown protocol {unknown[0]!r}", f"use some of: {', '.join(ARMS)}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise UserError(
            "--protocols: name two or more different protocols", "e.g. --protocols mca,decompose,vote"
        )
    if "vote" in names and "mca" not in names:
        raise UserError("--protocols: the matched vote arm needs the mca arm", "add mca")
    names.sort(key=lambda p: p != "mca")  # the matched vote arm needs mca's call count first
    return [ARMS[n] for n in names]


Protocols = Annotated[
    str,
    typer.Option(
        "--protocols",
        help="Comma-separated arms: " + "; ".join(f"{a.name} ({a.about})" for a in ARMS.values()),
    ),
]


# a comparison sets these itself (ARM_SETTINGS, each arm's protocol): no option for them
@o.with_settings(exclude=("protocol", *ARM_SETTINGS))
def compare(
    cfg: SessionConfig,
    passage: o.PassageArg,
    protocols: Protocols = "mca,decompose,vote",
    store: o.Store = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session", help="Prefix of the arms' session ids: <prefix>-<arm> (default: generated)"
        ),
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Folder for the arms' reports (one subfolder each)")
    ] = None,
    as_json: o.AsJSON = False,
    quiet: o.Quiet = False,
) -> None:
    """Run protocols on the same passage, model and seed, and print them side by side.

    Each arm is a stored session with the main debate only (no observers, no branches,
    no cache reads), so the numbers are the protocol's own."""
    values = cfg.model_dump()
    from dagmca.api.sync import in_workspace
    from dagmca.workspace.stored import new_session_id

    specs = _arms(protocols)
    configs = {a.name: o.build_config({**values, **ARM_SETTINGS, "protocol": a.protocol}) for a in specs}
    first = configs[specs[0].name]
    text = read_passage(passage, first.max_passage_bytes)
    check_backend(first)
    o.check_session_id(session)
    prefix = session or "compare-" + new_session_id(text)
    title = title_of(text, passage.stem)
    location = resolve_store(store)

    async def run_arms(ws: Workspace) -> list[Arm]:
        stored = {s.id for s in await ws.sessions()}
        taken = next((f"{prefix}-{s.name}" for s in specs if f"{prefix}-{s.name}" in stored), None)
        if taken is not None:
            raise UserError(f"session {taken!r} already exists", "choose another --session")
        arms: list[Arm] = []
        for spec in specs:
            arm_cfg = configs[spec.name]
            if spec.matched:
                size = matched_vote(arms[0].report)
                arm_cfg = o.build_config({**values, **ARM_SETTINGS, "protocol": spec.protocol, **size})
            sid = f"{prefix}-{spec.name}"
            started = time.monotonic()
            result = await ws.run(
                text,
                settings=arm_cfg,
                session=sid,
                title=title,
                events=None if quiet else progress(err),
                out_dir=out_dir / spec.name if out_dir else None,
            )
            arms.append(await collect(ws, spec, result, time.monotonic() - started))
            if not as_json:
                err.print(f"{spec.name}: session {sid} done in {arms[-1].wall_s:.1f}s")
        return arms

    try:
        arms = in_workspace(location, run_arms)  # one store, embedder and backend for every arm
    except KeyboardInterrupt:
        raise Interrupted(prefix, location) from None
    if as_json:
        print(json.dumps([a.row() for a in arms], indent=2))
        return
    out.print(compare_table(arms))
    for arm in arms:
        out.print(f"{arm.spec.name} report: {arm.report_path}", soft_wrap=True)
