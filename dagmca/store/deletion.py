"""Deleting a session from a Bolt store: the check that no other session's
relationships point into it and the removal, in one write transaction, so a refused
delete removes nothing and an accepted one cannot race a new link."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagmca.models import PERSONA_SESSION
from dagmca.store import cypher
from dagmca.store.base import SessionLinked, StoreError

if TYPE_CHECKING:
    import neo4j


def refuse_personas(session: str) -> None:
    if session == PERSONA_SESSION:
        raise StoreError("the personas are kept across sessions and are not deleted with one")


def delete_in(tx: neo4j.ManagedTransaction, session: str, force: bool) -> tuple[int, int]:
    """(nodes, relationships) removed; `SessionLinked` raised inside the transaction
    rolls it back."""
    refuse_personas(session)
    linked = [str(r["session"]) for r in tx.run(cypher.linked_sessions(), session=session)]
    if linked and not force:
        raise SessionLinked(session, linked)
    edges = int(tx.run(cypher.count_session_relationships(), session=session).single(strict=True)["edges"])
    nodes = int(tx.run(cypher.delete_session(), session=session).single(strict=True)["nodes"])
    return nodes, edges
