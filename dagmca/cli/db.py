"""Store and setup administration: `db init`, `push`, `doctor`."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import out
from dagmca.doctor import run_checks
from dagmca.errors import UserError
from dagmca.store import DEFAULT_STORE, open_existing, open_store, require_session, resolve_store
from dagmca.store.push import push_session


def db_init(store: o.Store = None) -> None:
    """Create the store's schema. Safe to run twice."""
    with open_store(resolve_store(store), create=True) as st:
        st.init_schema()
        out.print(f"initialised {st.location}")


def push(
    session: o.SessionArg,
    to: Annotated[
        str | None,
        typer.Option(
            "--to", help="Target store, e.g. bolt://localhost:7687 (default: NEO4J_URI).", show_default=False
        ),
    ] = None,
    store: o.Store = None,
) -> None:
    """Copy a session from the embedded store into Neo4j (or any store). Idempotent."""
    target_location = to or os.environ.get("NEO4J_URI")
    if not target_location:
        raise UserError("push needs a target", "pass --to bolt://host:7687 or set NEO4J_URI")
    # The source is the embedded store unless named: NEO4J_URI here means the target.
    source_location = store or str(DEFAULT_STORE)
    with open_existing(source_location) as src:
        require_session(src, session)
        with open_store(target_location, create=True) as dst:
            if dst.location == src.location:
                raise UserError("push source and target are the same store", "pass another --to")
            dst.init_schema()
            nodes, edges = push_session(src, dst, session)
            out.print(f"pushed {session}: {nodes} nodes, {edges} edges from {src.location} to {dst.location}")


def doctor(
    llm: o.LLM = None,
    model: o.Model = None,
    base_url: o.BaseURL = None,
    local_model: o.LocalModel = None,
    store: o.Store = None,
) -> None:
    """Check that a run can start: Python, the embedding model, the store, the LLM
    endpoint and model. Exit 0 when all are fine, 1 otherwise."""
    cfg = o.build_config({"llm": llm, "model": model, "base_url": base_url, "local_model": local_model})
    results = run_checks(cfg, resolve_store(store))
    table = Table("check", "", "detail", title="dagmca doctor", title_justify="left")
    for c in results:
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
    out.print(table)
    if not all(c.ok for c in results):
        raise typer.Exit(1)
