"""`dagmca compare`: protocols side by side on one passage, model and seed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from dagmca.debate.report_models import MCAReport
from dagmca.store.base import GraphStore

# What a comparison holds fixed so that only the protocol differs: no observers and
# no branches (they would add calls that are not the protocol's), and no reads from
# the response cache (an arm answered from it would show no cost and no time).
ARM_SETTINGS: dict[str, Any] = {"monitor_every": "off", "max_branches": 0, "cache": False}

# arm name -> the protocol it runs; `vote` is the compute-matched baseline (below)
ARMS = {"mca": "mca", "decompose": "decompose", "vote": "ensemble", "massgen": "vote", "ensemble": "ensemble"}
MAX_PEERS = 32


def matched_vote(mca: MCAReport) -> dict[str, Any]:
    """Settings of the compute-matched vote baseline: as many calls as the MCA arm made,
    spent on independent answers, one majority vote per voter, and the winner's final
    answer (self-consistency). C calls = n answers + (C - 1 - n) votes + 1."""
    calls = mca.summary_metrics.total_llm_calls
    answers = min(MAX_PEERS, max(1, -(-(calls - 1) // 2)))
    voters = max(1, min(answers, calls - 1 - answers))
    return {"protocol": "ensemble", "agents": answers, "ensemble_voters": voters}


@dataclass
class Arm:
    protocol: str
    session: str
    report_path: Path
    report: MCAReport
    wall_s: float
    tokens: int

    def row(self) -> dict[str, Any]:
        r = self.report
        return {
            "protocol": self.protocol,
            "session": self.session,
            "llm_calls": r.summary_metrics.total_llm_calls,
            "tokens": self.tokens,
            "wall_time_s": round(self.wall_s, 2),
            "rounds": r.convergence.rounds_used,
            "converged": r.convergence.converged,
            "lateral_revision_rate": r.summary_metrics.lateral_revision_rate,
            "mean_sibling_similarity": r.summary_metrics.mean_sibling_similarity,
            "final_length_words": r.summary_metrics.final_length_words,
            "report": str(self.report_path),
        }


def collect(store: GraphStore, protocol: str, session: str, out_dir: Path, wall_s: float) -> Arm:
    """One arm's numbers: its main debate's report, and the tokens of its calls."""
    path = out_dir / "mca_report.json"
    report = MCAReport.model_validate_json(path.read_text(encoding="utf-8"))
    main = f"{session}/main"
    tokens = sum(c.prompt_tokens + c.completion_tokens for c in store.calls(session) if c.debate == main)
    return Arm(protocol, session, path, report, wall_s, tokens)


def _fmt(value: Any) -> str:
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
    "session": "session",
    "llm_calls": "LLM calls",
    "tokens": "tokens",
    "wall_time_s": "wall time (s)",
    "rounds": "rounds",
    "converged": "converged",
    "lateral_revision_rate": "lateral revision rate",
    "mean_sibling_similarity": "mean sibling similarity per round",
    "final_length_words": "final length (words)",
}


def compare_table(arms: list[Arm]) -> Table:
    table = Table(title="dagmca compare", title_justify="left")
    table.add_column("", style="bold cyan", no_wrap=True)
    for arm in arms:
        table.add_column(arm.protocol, overflow="fold")
    rows = [arm.row() for arm in arms]
    for key, label in LABELS.items():
        table.add_row(label, *(_fmt(r[key]) for r in rows))
    return table
