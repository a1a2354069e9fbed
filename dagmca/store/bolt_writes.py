"""How a Bolt store writes a batch at the server's bulk speed: what is new goes in as
plain `UNWIND … CREATE` batches per label and per type, what is stored already is
updated in place, and which is which is known without asking the server where it can
be. The store (neo4j.py) owns the driver and hands this its write transactions."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors

from dagmca.graph import EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store import statements
from dagmca.store.base import StoreError
from dagmca.store.rows import edge_row, node_row

EdgeKey = tuple[str, str, EdgeType, str]  # source, target, type, key
# runs a unit of work in a write transaction of the store's, and returns what it returns
ExecuteWrite = Callable[[Callable[[neo4j.ManagedTransaction], list[str]]], list[str]]


class BoltWrites:
    """What one store has written, and the writes it plans from that."""

    def __init__(self, execute: ExecuteWrite) -> None:
        self._execute = execute
        # Creation order across processes (a resumed run, a push): monotonic clock
        # nanoseconds, never repeating within this process.
        self._last_seq = 0
        # What this store wrote (committed), so a write knows what is new without asking
        self._created: set[str] = set()
        self._edges_known: set[EdgeKey] = set()
        self._careful = False  # an optimistic create collided: look every id up from now on

    def forget(self) -> None:
        """After a deletion: nothing written earlier is known to be stored any more."""
        self._created.clear()
        self._edges_known.clear()

    def _seq(self) -> int:
        self._last_seq = max(self._last_seq + 1, time.time_ns())
        return self._last_seq

    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """Upserts at the server's bulk speed: what is new goes in as plain `UNWIND …
        CREATE` batches per label and per type; what is stored already is updated in place.

        What is new is known without asking where it can be: a node this store created is
        updated; any other node is created optimistically, and the id constraint refuses
        it if it exists (a resumed run, a second push) — then the write is done again
        the careful way, looking every id up first, and so are the writes after it. A
        relationship from a node this store created is new unless this store wrote it;
        any other is looked up."""
        latest = {n.id: n for n in nodes}  # one row per id: the statements need distinct ids
        # one row per (source, target, type, key): the last one wins, as upserts do
        keyed = {(e.source, e.target, e.type, e.key): e for e in edges}
        if not latest and not keyed:
            return
        node_rows = [(n, node_row(n, self._seq())) for n in latest.values()]
        edge_rows = [(k, edge_row(e, self._seq())) for k, e in keyed.items()]
        try:
            created = self._write(node_rows, edge_rows, careful=self._careful)
        except neo4j_errors.ConstraintError:
            if self._careful:
                raise
            self._careful = True
            created = self._write(node_rows, edge_rows, careful=True)
        self._created.update(created)
        self._edges_known.update(keyed)

    def _write(
        self,
        node_rows: list[tuple[NodeRecord, dict[str, Any]]],
        edge_rows: list[tuple[EdgeKey, dict[str, Any]]],
        *,
        careful: bool,
    ) -> list[str]:
        def work(tx: neo4j.ManagedTransaction) -> list[str]:
            created = set(self._write_nodes(tx, node_rows, careful) if node_rows else [])
            by_type: dict[EdgeType, list[tuple[EdgeKey, dict[str, Any]]]] = {}
            for key, row in edge_rows:
                by_type.setdefault(key[2], []).append((key, row))
            for type_, rows in by_type.items():
                self._write_edges(tx, type_, rows, created)
            return list(created)

        return self._execute(work)

    def _write_nodes(
        self, tx: neo4j.ManagedTransaction, rows: list[tuple[NodeRecord, dict[str, Any]]], careful: bool
    ) -> list[str]:
        # stored already: what this store created, and (careful) what a lookup finds
        found: set[str] = set()
        unknown = [n.id for n, _ in rows if n.id not in self._created]
        if careful and unknown:
            found = {r["id"] for r in tx.run(statements.existing_nodes(), ids=unknown)}
        new: dict[tuple[NodeKind, tuple[str, ...]], list[dict[str, Any]]] = {}
        old: dict[tuple[NodeKind, tuple[str, ...]], list[dict[str, Any]]] = {}
        for n, row in rows:
            group = old if n.id in self._created or n.id in found else new
            group.setdefault((n.kind, tuple(sorted(n.labels))), []).append(row)
        for (kind, labels), batch in new.items():
            tx.run(statements.create_nodes(kind, labels), rows=batch).consume()
        for (kind, labels), batch in old.items():
            for statement in statements.update_nodes(kind, labels):
                tx.run(statement, rows=batch).consume()
        return [row["id"] for batch in new.values() for row in batch]

    def _write_edges(
        self,
        tx: neo4j.ManagedTransaction,
        type_: EdgeType,
        rows: list[tuple[EdgeKey, dict[str, Any]]],
        created_now: set[str],
    ) -> None:
        known: list[dict[str, Any]] = []
        new: list[dict[str, Any]] = []
        unsure: list[dict[str, Any]] = []
        for key, row in rows:
            if key in self._edges_known:
                known.append(row)
            elif key[0] in self._created or key[0] in created_now:  # from a node this store made
                new.append(row)
            else:
                unsure.append(row)
        if unsure:
            probe = [
                {"i": i, "source": r["source"], "target": r["target"], "key": r["key"]}
                for i, r in enumerate(unsure)
            ]
            stored = {r["i"] for r in tx.run(statements.existing_edges(type_), rows=probe)}
            known += [r for i, r in enumerate(unsure) if i in stored]
            new += [r for i, r in enumerate(unsure) if i not in stored]
        if known:
            tx.run(statements.update_edges(type_), rows=known).consume()
        if new:
            written = tx.run(statements.create_edges(type_), rows=new).single(strict=True)["written"]
            if written != len(new):
                # Raising inside the managed transaction rolls all of it back.
                raise StoreError(f"{len(new) - written} {type_.value} edge(s) point at a missing node")
