"""Deleting a session: from a Bolt store, the check that no other session's
relationships point into it and the removal, in one write transaction, so a refused
delete removes nothing and an accepted one cannot race a new link; from either store,
the session's rows of the retrieval index beside the graph, so no later ask finds
a node that is gone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from dagmca.graph import PERSONA_SESSION
from dagmca.store import statements
from dagmca.store.base import GraphStore, SessionLinked, StoreError

if TYPE_CHECKING:
    import neo4j


def refuse_personas(session: str) -> None:
    if session == PERSONA_SESSION:
        raise StoreError("the personas are kept across sessions and are not deleted with one")


def delete_in(tx: neo4j.ManagedTransaction, session: str, force: bool) -> tuple[int, int]:
    """(nodes, relationships) removed; `SessionLinked` raised inside the transaction
    rolls it back."""
    refuse_personas(session)
    linked = [str(r["session"]) for r in tx.run(statements.linked_sessions(), session=session)]
    if linked and not force:
        raise SessionLinked(session, linked)
    edges = int(
        tx.run(statements.count_session_relationships(), session=session).single(strict=True)["edges"]
    )
    nodes = int(tx.run(statements.delete_session(), session=session).single(strict=True)["nodes"])
    return nodes, edges


class Deleted(BaseModel):
    """What deleting a session removed: its nodes, the relationships touching them, its
    call records and its nodes' rows in the retrieval index."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    nodes: int
    relationships: int
    calls: int
    indexed: int


def delete_session(store: GraphStore, session: str, *, force: bool = False) -> Deleted:
    """Remove `session` from `store` (see `GraphStore.delete_session`), then its rows of
    the retrieval index. The index goes second, in a transaction of its own: rows left
    behind by a crash between the two are never cited (an ask ranks only nodes the
    graph holds), and an ask of every session drops them."""
    nodes, edges, calls = store.delete_session(session, force=force)
    try:
        index = store.text_index()
    except StoreError:  # a store that keeps no index
        return Deleted(nodes=nodes, relationships=edges, calls=calls, indexed=0)
    return Deleted(nodes=nodes, relationships=edges, calls=calls, indexed=index.drop_sessions([session]))
