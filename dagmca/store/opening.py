"""Where the store is (the --store flag, the environment, the default under the current
directory), opening it, and what a reading command needs of it before it reads: a store
that holds sessions, and the session it names."""

from __future__ import annotations

import os
from pathlib import Path

from dagmca.errors import SessionNotFound, UserError
from dagmca.graph import NodeKind, NodeRecord
from dagmca.store.base import GraphStore
from dagmca.store.sqlite import SQLiteStore
from dagmca.store.target import BoltTarget, is_bolt_uri

DEFAULT_STORE = Path(".dagmca") / "dagmca.db"
# Where a Neo4j store's call log and response cache live: beside the graph, not in it
DEFAULT_LLM_STORE = Path(".dagmca") / "llm.db"


def resolve_store(flag: str | None) -> str:
    """--store flag > DAGMCA_STORE > NEO4J_URI > .dagmca/dagmca.db under the current directory."""
    return flag or os.environ.get("DAGMCA_STORE") or os.environ.get("NEO4J_URI") or str(DEFAULT_STORE)


def llm_store_path() -> Path:
    """DAGMCA_LLM_STORE > .dagmca/llm.db under the current directory."""
    return Path(os.environ.get("DAGMCA_LLM_STORE") or DEFAULT_LLM_STORE)


def open_store(location: str, *, create: bool = False) -> GraphStore:
    """Open a store. `create` makes the file (and its folder) when missing; the
    caller still runs `init_schema` explicitly."""
    if is_bolt_uri(location):
        # imported here: the driver takes half a second to import, and most runs are SQLite
        from dagmca.store.neo4j import connect

        return connect(BoltTarget.parse(location), llm_store=llm_store_path())
    path = Path(location)
    if path.is_dir():
        raise UserError(f"store {path} is a directory", "give a file path such as .dagmca/dagmca.db")
    if not path.exists():
        if not create:
            raise UserError(f"no store at {path}", "run `dagmca run PASSAGE` first, or pass --store")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        store = SQLiteStore(path)
        store.is_initialised()  # touches the file: a non-SQLite file fails here
    except Exception as exc:  # sqlite3 raises several kinds for unusable files
        raise UserError(f"cannot open store {path}: {exc}", "check the path") from exc
    return store


def open_existing(location: str) -> GraphStore:
    """Open a store that must already hold sessions (read commands)."""
    store = open_store(location)
    if not store.is_initialised():
        store.close()
        raise UserError(f"store {location} is not initialised", "run `dagmca db init` or `dagmca run`")
    return store


def require_session(store: GraphStore, session: str) -> NodeRecord:
    """The Session node of `session`, or a clear error naming the sessions there are."""
    node = store.get_node(session)
    if node is None or node.kind is not NodeKind.SESSION:
        known = [s.id for s in store.sessions()][-3:]
        hint = f"known: {', '.join(known)}" if known else "the store holds no session yet"
        raise SessionNotFound(
            f"no session {session!r} in {store.location}", f"see `dagmca sessions` ({hint})"
        )
    return node
