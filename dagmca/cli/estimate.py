"""`dagmca estimate PASSAGE [any run option]` (and `run --dry-run`): what a run would
spend, before it spends anything (run's settings, with --json)."""

from __future__ import annotations

from dagmca.cli import options as o
from dagmca.cli import run as run_command
from dagmca.config import SessionConfig
from dagmca.passage import read_passage


@o.with_settings()
def estimate(cfg: SessionConfig, passage: o.PassageArg, as_json: o.AsJSON = False) -> None:
    """Project a run's calls, tokens and cost from its settings and passage; spend nothing."""
    text = read_passage(passage, cfg.max_passage_bytes)
    run_command.show_projection(cfg, text, as_json)
