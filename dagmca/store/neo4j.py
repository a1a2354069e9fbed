"""Neo4j (or any Bolt server that speaks Neo4j 5 Cypher) through the official driver."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from dagmca.errors import EndpointError, UserError
from dagmca.graph import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store import deletion, statements
from dagmca.store.base import GraphStore
from dagmca.store.bolt_writes import BoltWrites
from dagmca.store.rows import to_edge, to_node
from dagmca.store.search import TextIndex
from dagmca.store.sqlite import memory_call_log, sidecar
from dagmca.store.target import BOLT_SCHEMES, BoltTarget, is_bolt_uri

__all__ = ["BOLT_SCHEMES", "BoltTarget", "Neo4jStore", "connect", "is_bolt_uri"]

T = TypeVar("T")


def connect(target: BoltTarget, *, llm_store: Path | None = None) -> Neo4jStore:
    """Open a driver and prove the server, the credentials and the database, so a
    wrong setting fails here with one line instead of mid-run. `llm_store`: the SQLite
    file for the call log and the response cache (none: kept in memory)."""
    auth = (target.user, target.password) if target.password is not None else None
    try:
        driver = neo4j.GraphDatabase.driver(
            target.uri, auth=auth, connection_timeout=5.0, max_transaction_retry_time=15.0
        )
    except (neo4j_errors.ConfigurationError, ValueError) as exc:
        raise UserError(f"bad Neo4j URI {target.location}: {exc}", "expected bolt://host:7687") from None
    store = Neo4jStore(
        driver,
        database=target.database,
        location=target.location,
        llm_store=sidecar(llm_store) if llm_store is not None else None,
    )
    try:
        store.ping()
    except BaseException:
        driver.close()
        raise
    return store


class Neo4jStore(GraphStore):
    """Takes a driver so callers (and tests) choose how to connect. A `write` is one
    managed transaction of batched statements, planned by `BoltWrites`; the driver
    retries transient errors."""

    def __init__(
        self,
        driver: neo4j.Driver,
        *,
        database: str | None = None,
        location: str = "",
        llm_store: Callable[[], GraphStore] | None = None,
    ) -> None:
        self._driver = driver
        # the call log and response cache: a SQLite file beside the graph (in memory
        # when the caller names none)
        self._open_llm_store = llm_store or memory_call_log
        self._llm_store: GraphStore | None = None
        self._database = database
        self._location = location or "neo4j"
        self._writes = BoltWrites(lambda work: self._call(lambda s: s.execute_write(work)))
        self.schema_notes: list[str] = []  # what `init_schema` could not create, and why
        self._fulltext: bool | None = None  # whether the server has the full-text index, once known

    @property
    def location(self) -> str:
        return self._location

    def ping(self) -> None:
        self._call(lambda s: s.run(statements.ping()).consume())

    def init_schema(self) -> None:
        for stmt in [*statements.schema_statements(), statements.claim_constraint()]:
            self._call(lambda s, q=stmt: s.run(q).consume())  # type: ignore[misc]
        self.schema_notes = []
        try:
            self._call(lambda s: s.run(statements.fulltext_index()).consume())
        except neo4j_errors.ClientError as exc:  # a Bolt server without full-text indexes
            self.schema_notes.append(f"no full-text index: the server refused it ({exc.message})")

    def has_fulltext(self) -> bool:
        """Whether the full-text index over the texts exists (the cookbook's search)."""
        try:
            rows = self._read(statements.show_indexes(), {})
        except neo4j_errors.ClientError:
            return False
        return any(r.get("name") == statements.FULLTEXT_INDEX for r in rows)

    def text_index(self, *, fulltext: bool = True) -> TextIndex:
        """Vectors only, in the sidecar with the call log: the server searches the texts."""
        return self.llm_store.text_index(fulltext=False)

    def search_texts(
        self, terms: Sequence[str], sessions: Sequence[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """The server's full-text index; without one (ArcadeDB), a portable CONTAINS query."""
        if self._fulltext is None:
            self._fulltext = self.has_fulltext()
        query, params = statements.text_search(terms, sessions, limit, fulltext=self._fulltext)
        return [(str(r["id"]), float(r["score"])) for r in self._read(query, params)] if query else []

    def is_initialised(self) -> bool:
        rows = self._read(statements.show_constraints(), {})
        return any(r.get("name") == statements.ID_CONSTRAINT for r in rows)

    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """Upserts at the server's bulk speed (bolt_writes.py says how what is new is
        known), in one managed transaction the driver retries."""
        self._writes.write(nodes, edges)

    def run_batches(self, statements: Sequence[tuple[str, list[dict[str, Any]]]]) -> None:
        """(query, rows) pairs in one write transaction (the benchmark's plain baseline)."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            for query, rows in statements:
                tx.run(query, rows=rows).consume()

        self._call(lambda s: s.execute_write(work))

    def get_node(self, node_id: str) -> NodeRecord | None:
        rows = self._read(statements.get_node(), {"id": node_id})
        return to_node(rows[0]["props"], rows[0]["labels"]) if rows else None

    def nodes(self, session: str, kind: NodeKind | None = None) -> list[NodeRecord]:
        rows = self._read(statements.session_nodes(kind), {"session": session})
        return [to_node(r["props"], r["labels"]) for r in rows]

    def edges(self, session: str, type_: EdgeType | None = None) -> list[EdgeRecord]:
        rows = self._read(statements.session_edges(type_), {"session": session})
        rows += self._read(statements.session_edges(type_, from_outside=True), {"session": session})
        rows.sort(key=lambda r: r["props"].get("seq", 0))
        return [to_edge(r["source"], r["target"], r["type"], r["props"]) for r in rows]

    def sessions(self) -> list[NodeRecord]:
        return [to_node(r["props"], r["labels"]) for r in self._read(statements.sessions(), {})]

    def counts(self, session: str) -> tuple[int, int]:
        row = self._read(statements.count_session(), {"session": session})[0]
        return int(row["nodes"]), int(row["edges"])

    # -- the call log and the response cache: beside the graph, never in it ------------
    @property
    def llm_store(self) -> GraphStore:
        """The SQLite file that keeps this store's call log and response cache, opened
        when first needed, so the user's graph holds only the user's data."""
        if self._llm_store is None:
            self._llm_store = self._open_llm_store()
        return self._llm_store

    def record_calls(self, calls: Sequence[CallRecord]) -> None:
        self.llm_store.record_calls(calls)

    def calls(self, session: str) -> list[CallRecord]:
        return self.llm_store.calls(session)

    def cache_get(self, key: str) -> str | None:
        return self.llm_store.cache_get(key)

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        return self.llm_store.cache_get_many(keys)

    def cache_put(self, key: str, model: str, value: str) -> None:
        self.llm_store.cache_put(key, model, value)

    def prune_llm(self, before: str | None, *, calls: bool = False) -> tuple[int, int]:
        """The sidecar's pruning, and what earlier versions left in the graph itself."""
        cache, log = self.llm_store.prune_llm(before, calls=calls)
        legacy = [(statements.LEGACY_CACHE_LABEL, "created_at")]
        if calls:
            legacy.append((statements.LEGACY_CALL_LABEL, "at"))
        for label, stamp in legacy:
            while removed := self._write_count(statements.prune_legacy(label, stamp), {"before": before}):
                if label == statements.LEGACY_CACHE_LABEL:
                    cache += removed
                else:
                    log += removed
        return cache, log

    def claim(self, key: str, worker: str, ttl_s: float, *, replacing: str | None = None) -> str:
        now = time.time()

        def work(tx: neo4j.ManagedTransaction) -> str:
            row = tx.run(statements.lock_claim(), key=key, worker=worker, expires=now + ttl_s).single(
                strict=True
            )
            mine = row["worker"] in (worker, replacing) or float(row["expires"]) <= now
            taken = {"worker": worker, "expires": now + ttl_s} if mine else {"worker": None, "expires": None}
            tx.run(statements.set_claim(), key=key, **taken).consume()
            return worker if mine else str(row["worker"])

        for _ in range(3):
            try:
                return self._call(lambda s: s.execute_write(work))
            except neo4j_errors.ConstraintError:
                # another worker created the claim in the same instant (servers that do
                # not serialise MERGE on a unique key): it exists now, so ask again
                continue
        return ""  # still contended: not this worker's

    def release(self, key: str, worker: str) -> None:
        self._write_one(statements.release_claim(), {"key": key, "worker": worker})

    def delete_session(self, session: str, *, force: bool = False) -> tuple[int, int, int]:
        nodes, edges = self._call(lambda s: s.execute_write(deletion.delete_in, session, force))
        self._forget()
        return nodes, edges, self.llm_store.delete_session(session, force=True)[2]

    def delete_all(self) -> None:
        self._write_one(statements.delete_all(), {})
        self._forget()

    def _forget(self) -> None:
        self._writes.forget()

    def _write_count(self, query: str, params: dict[str, Any]) -> int:
        def work(tx: neo4j.ManagedTransaction) -> int:
            return int(tx.run(query, params).single(strict=True)["removed"])

        return self._call(lambda s: s.execute_write(work))

    def _write_one(self, query: str, params: dict[str, Any]) -> None:
        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(query, params).consume()

        self._call(lambda s: s.execute_write(work))

    def run_query(
        self, query: str, params: dict[str, Any], *, write: bool = False, timeout: float | None = None
    ) -> list[neo4j.Record]:
        """A user's Cypher (`dagmca query`), in a read transaction unless `write`; with
        `timeout`, the server ends the transaction after that many seconds."""

        @neo4j.unit_of_work(timeout=timeout)
        def work(tx: neo4j.ManagedTransaction) -> list[neo4j.Record]:
            return list(tx.run(query, params))

        if write:
            return self._call(lambda s: s.execute_write(work))
        return self._call(lambda s: s.execute_read(work))

    def close(self) -> None:
        self._driver.close()
        if self._llm_store is not None:
            self._llm_store.close()

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            return [r.data() for r in tx.run(query, params)]

        return self._call(lambda s: s.execute_read(work))

    def _call(self, fn: Callable[[neo4j.Session], T]) -> T:
        try:
            with self._driver.session(database=self._database) as session:
                return fn(session)
        except neo4j_errors.AuthError:
            raise EndpointError(
                f"Neo4j at {self._location} refused the user name or password",
                "check NEO4J_USER and NEO4J_PASSWORD",
            ) from None
        except neo4j_errors.ServiceUnavailable:
            raise EndpointError(
                f"cannot reach Neo4j at {self._location}",
                "start it (`docker compose up -d`) or check --store / NEO4J_URI",
            ) from None
        except neo4j_errors.ClientError as exc:
            if exc.code and exc.code.endswith("DatabaseNotFound"):
                raise UserError(
                    f"Neo4j at {self._location} has no database {self._database!r}",
                    "create it, or set NEO4J_DATABASE / the /database part of the URI",
                ) from None
            raise
