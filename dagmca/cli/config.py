"""`dagmca config show`: every setting a run here would use, with the source of its value.

It takes every option `run` takes, so it answers "what would this command run with?"
as well as "where does this value come from?"."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer
from rich.table import Table
from rich.text import Text

from dagmca.cli import options as o
from dagmca.cli.console import out
from dagmca.config.sources import Resolved

app = typer.Typer(
    help="The settings: what each one is, and where its value comes from.", no_args_is_help=True
)


def _shown(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


@app.command("show")
@o.with_settings(sources=True)
def show(resolved: Resolved, as_json: o.AsJSON = False) -> None:
    """Print every effective setting, its group, value and source (flag, env,
    profile:NAME, file:PATH or default), after the options given here."""
    rows = resolved.settings()
    if as_json:
        out.print_json(json.dumps([asdict(r) for r in rows]))
        return
    table = Table(title="dagmca settings", title_justify="left")
    for column in ("group", "setting", "value", "source"):
        table.add_column(column, overflow="fold")
    for r in rows:
        style = "dim" if r.source == "default" else None
        # Text: a value is shown as it is, never read as rich markup
        table.add_row(r.group, r.name, Text(_shown(r.value)), Text(r.source), style=style)
    out.print(table)
