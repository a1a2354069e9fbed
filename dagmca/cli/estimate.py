"""`dagmca estimate PASSAGE [any run option]` (and `run --dry-run`): what a run would
spend, before it spends anything (the signature is run's, with --json)."""

from __future__ import annotations

import inspect
import typing
from typing import Any

from dagmca.cli import options as o
from dagmca.cli import run as run_command
from dagmca.passage import read_passage


def estimate(**values: Any) -> None:
    """Project a run's calls, tokens and cost from its settings and passage; spend nothing."""
    settings = {k: v for k, v in values.items() if k not in (*run_command.NOT_SETTINGS, "as_json", "dry_run")}
    cfg = o.build_config(settings)
    text = read_passage(values["passage"], cfg.max_passage_bytes)
    run_command.show_projection(cfg, text, values["as_json"])


def _signature() -> None:
    hints = typing.get_type_hints(run_command.run, include_extras=True)
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [
        p.replace(annotation=hints[name])
        for name, p in inspect.signature(run_command.run).parameters.items()
        if name not in ("store", "session", "out_dir", "quiet", "dry_run")
    ]
    own = inspect.Parameter("as_json", kw, default=False, annotation=o.AsJSON)
    ordered = [params[0], *(p.replace(kind=kw) for p in params[1:]), own]
    estimate.__signature__ = inspect.Signature(ordered)  # type: ignore[attr-defined]
    estimate.__annotations__ = {p.name: p.annotation for p in ordered}


_signature()
