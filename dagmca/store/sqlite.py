"""The embedded default store: one SQLite file, WAL, foreign keys."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from dagmca.graph import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.base import GraphStore, SessionLinked, StoreError
from dagmca.store.deletion import refuse_personas
from dagmca.store.search import TextIndex

SQL_VARIABLES = 500  # bound parameters per statement (SQLite's limit was 999 before 3.32)

_EDGES = """
CREATE TABLE IF NOT EXISTS edges (
    source TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    target TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    key TEXT NOT NULL DEFAULT '',
    session TEXT NOT NULL,
    props TEXT NOT NULL DEFAULT '{}',
    seq INTEGER NOT NULL,
    PRIMARY KEY (source, target, type, key)
);
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    kind TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    props TEXT NOT NULL DEFAULT '{}',
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_session_kind ON nodes(session, kind, seq);
-- seq indexes keep MAX(seq) + 1 (creation order on insert) logarithmic, not a scan.
CREATE INDEX IF NOT EXISTS nodes_seq ON nodes(seq);
{edges}CREATE INDEX IF NOT EXISTS edges_session_type ON edges(session, type, seq);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target);
CREATE INDEX IF NOT EXISTS edges_seq ON edges(seq);
CREATE TABLE IF NOT EXISTS llm_calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_calls_session ON llm_calls(session, seq);
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, worker TEXT NOT NULL, expires REAL NOT NULL);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '2');
""".replace("{edges}", _EDGES)
SCHEMA_VERSION = 2

# Version 1 kept one edge per (source, target, type): the edges table gains its key.
# (The old indexes went with edges_v1; SCHEMA makes them anew on the new table.)
_MIGRATE_1_TO_2 = """
ALTER TABLE edges RENAME TO edges_v1;
{edges}INSERT INTO edges(source, target, type, key, session, props, seq)
    SELECT source, target, type, '', session, props, seq FROM edges_v1;
DROP TABLE edges_v1;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
""".replace("{edges}", _EDGES)

# `seq` (creation order) is given by the writer: an update keeps the first one.
_UPSERT_NODE = """
INSERT INTO nodes(id, session, kind, labels, created_at, props, seq) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET labels = excluded.labels, props = excluded.props
"""
_UPSERT_EDGE = """
INSERT INTO edges(source, target, type, key, session, props, seq) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(source, target, type, key) DO UPDATE SET props = excluded.props
"""
# The sessions whose relationships touch a session's nodes (two index lookups, not a scan)
_LINKED_SESSIONS = """
SELECT e.session FROM edges e JOIN nodes n ON n.id = e.source WHERE n.session = ? AND e.session <> ?
UNION
SELECT e.session FROM edges e JOIN nodes n ON n.id = e.target WHERE n.session = ? AND e.session <> ?
ORDER BY 1
"""
_DELETE_SESSION_EDGES = """
DELETE FROM edges WHERE session = ? OR source IN (SELECT id FROM nodes WHERE session = ?)
    OR target IN (SELECT id FROM nodes WHERE session = ?)
"""
NodeRow = tuple[str, str, str, str, str, str, int]
EdgeRow = tuple[str, str, str, str, str, str, int]


# One encoder for every row: `json.dumps` with options builds a new one a call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def sqlite_node_row(n: NodeRecord, seq: int) -> NodeRow:
    labels = _encode(list(n.labels)) if n.labels else "[]"
    return (n.id, n.session, n.kind.value, labels, n.created_at, _encode(n.props), seq)


def sqlite_edge_row(e: EdgeRecord, seq: int) -> EdgeRow:
    return (e.source, e.target, e.type.value, e.key, e.session, _encode(e.props), seq)


class SQLiteStore(GraphStore):
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one per event.
        # check_same_thread=False: during a run the store's own thread uses the
        # connection (BackgroundStore), one call at a time; before and after, the caller's.
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0, check_same_thread=False)
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._conn.execute("PRAGMA busy_timeout = 30000")
        # In WAL mode (init_schema sets it), NORMAL syncs at checkpoints, not at every
        # commit: a killed process still keeps every committed event (only a power cut
        # can lose the last ones). An fsync per event was half the store thread's time
        # on a session of thousands of calls.
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._batched = False  # inside `batch`: writes are savepoints of its transaction

    @property
    def location(self) -> str:
        return str(self.path)

    def init_schema(self) -> None:
        self._wal()
        if self._version() == 1:
            with self._tx() as cur:
                for stmt in _MIGRATE_1_TO_2.split(";"):
                    if stmt.strip():
                        cur.execute(stmt)
        self._conn.executescript(SCHEMA)

    def _wal(self) -> None:
        """WAL mode, set once per file. Switching it takes the file whole, and SQLite
        answers a second process doing the same at that moment with "database is locked"
        without waiting for its busy timeout (two `dagmca run` started together on a new
        store), so a locked switch is tried again until the timeout."""
        deadline = time.monotonic() + 30.0
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _version(self) -> int | None:
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:  # no meta table: a new file
            return None
        return int(row[0]) if row else None

    def is_initialised(self) -> bool:
        tables = ("nodes", "edges", "llm_calls", "llm_cache")
        marks = ",".join("?" * len(tables))
        row = self._conn.execute(
            f"SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN ({marks})", tables
        ).fetchone()
        return bool(row and row[0] == len(tables)) and self._version() == SCHEMA_VERSION

    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        if not nodes and not edges:
            return
        try:
            with self._tx() as cur:
                # seq for new rows: one MAX() a table per write, not a subquery a row
                if nodes:
                    base = cur.execute("SELECT COALESCE(MAX(seq), 0) FROM nodes").fetchone()[0]
                    cur.executemany(
                        _UPSERT_NODE, [sqlite_node_row(n, base + i) for i, n in enumerate(nodes, 1)]
                    )
                if edges:
                    base = cur.execute("SELECT COALESCE(MAX(seq), 0) FROM edges").fetchone()[0]
                    cur.executemany(
                        _UPSERT_EDGE, [sqlite_edge_row(e, base + i) for i, e in enumerate(edges, 1)]
                    )
        except sqlite3.IntegrityError as exc:  # rolled back by _tx
            raise StoreError(f"write refused: {exc}") from exc

    def get_node(self, node_id: str) -> NodeRecord | None:
        row = self._conn.execute(
            "SELECT id, session, kind, labels, created_at, props FROM nodes WHERE id = ?",
            (node_id,),
        ).fetchone()
        return _node(row) if row else None

    def nodes(self, session: str, kind: NodeKind | None = None) -> list[NodeRecord]:
        sql = "SELECT id, session, kind, labels, created_at, props FROM nodes WHERE session = ?"
        args: tuple[str, ...] = (session,)
        if kind is not None:
            sql += " AND kind = ?"
            args += (kind.value,)
        return [_node(r) for r in self._conn.execute(sql + " ORDER BY seq", args)]

    def edges(self, session: str, type_: EdgeType | None = None) -> list[EdgeRecord]:
        sql = "SELECT source, target, type, session, props FROM edges WHERE session = ?"
        args: tuple[str, ...] = (session,)
        if type_ is not None:
            sql += " AND type = ?"
            args += (type_.value,)
        return [_edge(r) for r in self._conn.execute(sql + " ORDER BY seq", args)]

    def edge_counts(self, session: str) -> dict[EdgeType, int]:
        rows = self._conn.execute(
            "SELECT type, COUNT(*) FROM edges WHERE session = ? GROUP BY type", (session,)
        )
        return {EdgeType(t): n for t, n in rows}

    def sessions(self) -> list[NodeRecord]:
        rows = self._conn.execute(
            "SELECT id, session, kind, labels, created_at, props FROM nodes WHERE kind = ? ORDER BY seq",
            (NodeKind.SESSION.value,),
        )
        return [_node(r) for r in rows]

    def record_calls(self, calls: Sequence[CallRecord]) -> None:
        rows = [(c.session, c.model_dump_json()) for c in calls]
        with self._tx() as cur:
            cur.executemany("INSERT INTO llm_calls(session, record) VALUES (?, ?)", rows)

    def calls(self, session: str) -> list[CallRecord]:
        rows = self._conn.execute("SELECT record FROM llm_calls WHERE session = ? ORDER BY seq", (session,))
        return [CallRecord.model_validate_json(r[0]) for r in rows]

    def cache_get(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        unique, found = list(dict.fromkeys(keys)), dict[str, str]()
        for start in range(0, len(unique), SQL_VARIABLES):
            chunk = unique[start : start + SQL_VARIABLES]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(f"SELECT key, value FROM llm_cache WHERE key IN ({marks})", chunk)
            found.update((str(k), str(v)) for k, v in rows)
        return found

    def cache_put(self, key: str, model: str, value: str) -> None:
        with self._tx() as cur:
            cur.execute(
                "INSERT OR IGNORE INTO llm_cache(key, model, value) VALUES (?, ?, ?)", (key, model, value)
            )

    def prune_llm(self, before: str | None, *, calls: bool = False) -> tuple[int, int]:
        cutoff = before or "9999"  # every ISO time sorts before it
        with self._tx() as cur:
            cache = cur.execute(
                "DELETE FROM llm_cache WHERE created_at < ?", (_sqlite_time(before) if before else cutoff,)
            ).rowcount
            log = 0
            if calls:
                log = cur.execute(
                    "DELETE FROM llm_calls WHERE json_extract(record, '$.at') < ?", (cutoff,)
                ).rowcount
        return cache, log

    def delete_session(self, session: str, *, force: bool = False) -> tuple[int, int, int]:
        refuse_personas(session)
        with self._tx() as cur:  # a refusal raises inside: rolled back, nothing removed
            linked = [str(r[0]) for r in cur.execute(_LINKED_SESSIONS, (session, session) * 2)]
            if linked and not force:
                raise SessionLinked(session, linked)
            edges = cur.execute(_DELETE_SESSION_EDGES, (session,) * 3).rowcount
            nodes = cur.execute("DELETE FROM nodes WHERE session = ?", (session,)).rowcount
            calls = cur.execute("DELETE FROM llm_calls WHERE session = ?", (session,)).rowcount
        return nodes, edges, calls

    def text_index(self, *, fulltext: bool = True) -> TextIndex:
        """In this file, beside the graph (tables `ask_*`)."""
        return TextIndex(self._conn, self._tx, fulltext=fulltext)

    def claim(self, key: str, worker: str, ttl_s: float, *, replacing: str | None = None) -> str:
        now = time.time()
        with self._tx() as cur:  # BEGIN IMMEDIATE: one writer at a time, across processes
            row = cur.execute("SELECT worker, expires FROM claims WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] not in (worker, replacing) and row[1] > now:
                return str(row[0])
            cur.execute(
                "INSERT INTO claims(key, worker, expires) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET worker = excluded.worker, expires = excluded.expires",
                (key, worker, now + ttl_s),
            )
        return worker

    def release(self, key: str, worker: str) -> None:
        with self._tx() as cur:
            cur.execute("DELETE FROM claims WHERE key = ? AND worker = ?", (key, worker))

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction, one commit, for the writes inside, each in a savepoint of
        its own."""
        if self._batched:  # already inside one
            yield
            return
        self._conn.execute("BEGIN IMMEDIATE")
        self._batched = True
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:  # a refused COMMIT leaves it open: take it back
                self._conn.execute("ROLLBACK")
            raise
        finally:
            self._batched = False

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        cur = self._conn.cursor()
        if self._batched:  # inside a batch: a failed write takes back only itself
            cur.execute("SAVEPOINT write")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK TO write")
                raise
            finally:
                cur.execute("RELEASE write")
            return
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()


def _node(row: tuple[str, str, str, str, str, str]) -> NodeRecord:
    id_, session, kind, labels, created_at, props = row
    return NodeRecord(
        id=id_,
        session=session,
        kind=NodeKind(kind),
        labels=tuple(json.loads(labels)),
        created_at=created_at,
        props=json.loads(props),
    )


def _edge(row: tuple[str, str, str, str, str]) -> EdgeRecord:
    source, target, type_, session, props = row
    return EdgeRecord(
        source=source, target=target, type=EdgeType(type_), session=session, props=json.loads(props)
    )


def _sqlite_time(iso: str) -> str:
    """An ISO time in the form SQLite's own clock writes `llm_cache.created_at`
    (UTC, `Z`), so the two compare as text."""
    when = datetime.fromisoformat(iso)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def memory_call_log() -> GraphStore:
    """An in-memory SQLite store for a Bolt store's call log and response cache."""
    store = SQLiteStore(":memory:")
    store.init_schema()
    return store


def sidecar(path: Path) -> Callable[[], GraphStore]:
    """Opens (and creates) the SQLite file `path` as a call log and response cache."""

    def open_() -> GraphStore:
        path.parent.mkdir(parents=True, exist_ok=True)
        store = SQLiteStore(path)
        store.init_schema()
        return store

    return open_
