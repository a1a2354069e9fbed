"""The retrieval index that `dagmca ask` keeps beside the graph, in SQLite: one vector per
indexed node and embedder (float32 bytes), and, where the store searches its texts
itself, an FTS5 table of the same texts.

Rows are keyed by node id and carry a hash of the text they were made from, so the
indexer can tell a node it has not seen, or whose text changed since, from one that is
up to date, and embeds only those. The tables are made on first use: a store that is
never asked anything never has them.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

SQL_VARIABLES = 500  # bound parameters per statement, well under SQLite's limit

_TABLES = """
CREATE TABLE IF NOT EXISTS ask_vectors (
    node TEXT NOT NULL,
    embedder TEXT NOT NULL,
    session TEXT NOT NULL,
    sha TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (node, embedder)
);
CREATE INDEX IF NOT EXISTS ask_vectors_session ON ask_vectors(embedder, session);
"""
# The texts the FTS5 table searches: its rowid is the row's here, so a changed or
# removed text is found by node id.
_FULLTEXT = """
CREATE TABLE IF NOT EXISTS ask_texts (
    id INTEGER PRIMARY KEY,
    node TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL,
    sha TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ask_texts_session ON ask_texts(session);
CREATE VIRTUAL TABLE IF NOT EXISTS ask_fts USING fts5(text, tokenize = 'porter unicode61');
"""

# Where the graph is in the same file: a version per session, raised by every write of
# its nodes or relationships (triggers, so a write by any process counts), and the
# snapshots of the sessions' parts of the corpus, each at the version it was read at.
_TRACKING = """
CREATE TABLE IF NOT EXISTS ask_versions (session TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ask_corpus (
    session TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ask_matrix (
    session TEXT NOT NULL, embedder TEXT NOT NULL, version INTEGER NOT NULL,
    ids TEXT NOT NULL, matrix BLOB NOT NULL, PRIMARY KEY (session, embedder)
);
""" + "".join(
    f"""CREATE TRIGGER IF NOT EXISTS ask_{table}_{event.lower()} AFTER {event} ON {table} BEGIN
    INSERT INTO ask_versions(session, version) VALUES ({row}.session, 1)
    ON CONFLICT(session) DO UPDATE SET version = version + 1;
END;
"""
    for table in ("nodes", "edges")
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old"))
)

Transaction = Callable[[], contextlib.AbstractContextManager[sqlite3.Cursor]]


@dataclass(frozen=True)
class IndexRow:
    """One node's text as indexed: `vector` is the embedder's float32 bytes."""

    node: str
    session: str
    sha: str
    text: str
    vector: bytes


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 expression that matches any of `terms` (a term with spaces is a phrase),
    each quoted, so nothing in a question is read as FTS5 syntax."""
    quoted = ['"' + t.replace('"', " ") + '"' for t in terms if t.strip()]
    return " OR ".join(quoted)


class TextIndex:
    """The index tables on one SQLite connection. `tx` opens one write transaction (the
    store's own); `fulltext` keeps the FTS5 table too (off where the graph's own server
    searches the texts)."""

    def __init__(self, conn: sqlite3.Connection, tx: Transaction, *, fulltext: bool = True) -> None:
        self._conn = conn
        self._tx = tx
        self.fulltext = fulltext
        # the texts are kept here exactly where the graph is in this file too (a Bolt
        # store's index is a sidecar, and its server searches the texts): then the
        # graph's writes can be tracked here
        self.tracked = fulltext
        self._ready = False

    def ensure(self) -> None:
        """Make the tables (and where the graph is here, the triggers) when missing. Idempotent."""
        if not self._ready:
            extra = (_FULLTEXT + _TRACKING) if self.fulltext else ""
            self._conn.executescript(_TABLES + extra)
            self._ready = True

    def versions(self, sessions: Sequence[str]) -> dict[str, int]:
        """The graph's version of each of `sessions` (0: not written since tracking
        began); empty where the graph is not in this file."""
        if not self.tracked:
            return {}
        self.ensure()
        found = dict.fromkeys(sessions, 0)
        for cond, args in self._where(sessions):
            rows = self._conn.execute(f"SELECT session, version FROM ask_versions WHERE {cond}", args)
            found.update((str(s), int(v)) for s, v in rows)
        return found

    def snapshot(self, session: str, version: int) -> str | None:
        """The session's corpus snapshot when it was read at `version`, else None."""
        if not self.tracked:
            return None
        self.ensure()
        row = self._conn.execute(
            "SELECT data FROM ask_corpus WHERE session = ? AND version = ?", (session, version)
        ).fetchone()
        return str(row[0]) if row is not None else None

    def matrix(self, session: str, embedder: str, version: int) -> tuple[list[str], bytes] | None:
        """The session's vectors of `embedder` as one block (node ids in id order, and
        their float32 rows back to back), when kept at `version`; else None."""
        if not self.tracked:
            return None
        self.ensure()
        row = self._conn.execute(
            "SELECT ids, matrix FROM ask_matrix WHERE session = ? AND embedder = ? AND version = ?",
            (session, embedder, version),
        ).fetchone()
        return (list(json.loads(row[0])), bytes(row[1])) if row is not None else None

    def keep_matrix(
        self, session: str, embedder: str, version: int, ids: Sequence[str], block: bytes
    ) -> None:
        if not self.tracked:
            return
        self.ensure()
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO ask_matrix(session, embedder, version, ids, matrix) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(session, embedder) DO UPDATE SET version = excluded.version, "
                "ids = excluded.ids, matrix = excluded.matrix",
                (session, embedder, version, json.dumps(list(ids)), block),
            )

    def keep_snapshot(self, session: str, version: int, data: str) -> None:
        if not self.tracked:
            return
        self.ensure()
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO ask_corpus(session, version, data) VALUES (?, ?, ?) ON CONFLICT(session) "
                "DO UPDATE SET version = excluded.version, data = excluded.data",
                (session, version, data),
            )

    @staticmethod
    def _where(sessions: Sequence[str] | None, column: str = "session") -> Iterator[tuple[str, list[str]]]:
        """A `column IN (...)` condition per chunk of `sessions`; for None, one that holds."""
        if sessions is None:
            yield "1", []
            return
        unique = list(dict.fromkeys(sessions))
        for start in range(0, len(unique), SQL_VARIABLES):
            chunk = unique[start : start + SQL_VARIABLES]
            yield f"{column} IN ({','.join('?' * len(chunk))})", chunk

    def put(self, embedder: str, rows: Sequence[IndexRow]) -> None:
        """Index `rows` (new nodes, or nodes whose text changed), in one transaction."""
        if not rows:
            return
        self.ensure()
        with self._tx() as cur:
            cur.executemany(
                "INSERT INTO ask_vectors(node, embedder, session, sha, vector) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(node, embedder) DO UPDATE SET session = excluded.session, "
                "sha = excluded.sha, vector = excluded.vector",
                [(r.node, embedder, r.session, r.sha, r.vector) for r in rows],
            )
            if self.fulltext:
                self._put_texts(cur, rows)

    def _put_texts(self, cur: sqlite3.Cursor, rows: Sequence[IndexRow]) -> None:
        for r in rows:
            old = cur.execute("SELECT id, sha FROM ask_texts WHERE node = ?", (r.node,)).fetchone()
            if old is not None and old[1] == r.sha:
                continue  # indexed for another embedder already
            if old is not None:
                cur.execute("DELETE FROM ask_fts WHERE rowid = ?", (old[0],))
                cur.execute("DELETE FROM ask_texts WHERE id = ?", (old[0],))
            row = (r.node, r.session, r.sha)
            cur.execute("INSERT INTO ask_texts(node, session, sha) VALUES (?, ?, ?)", row)
            rowid = cur.execute("SELECT last_insert_rowid()").fetchone()[0]
            cur.execute("INSERT INTO ask_fts(rowid, text) VALUES (?, ?)", (rowid, r.text))

    def drop(self, nodes: Sequence[str]) -> None:
        """Forget `nodes` (gone from the graph, or no longer indexable), for every embedder."""
        if not nodes:
            return
        self.ensure()
        unique = list(dict.fromkeys(nodes))
        with self._tx() as cur:
            for start in range(0, len(unique), SQL_VARIABLES):
                chunk = unique[start : start + SQL_VARIABLES]
                marks = ",".join("?" * len(chunk))
                cur.execute(f"DELETE FROM ask_vectors WHERE node IN ({marks})", chunk)
                if self.fulltext:
                    rows = f"SELECT id FROM ask_texts WHERE node IN ({marks})"
                    cur.execute(f"DELETE FROM ask_fts WHERE rowid IN ({rows})", chunk)
                    cur.execute(f"DELETE FROM ask_texts WHERE node IN ({marks})", chunk)

    def sessions(self) -> set[str]:
        """Every session the index holds a row of."""
        self.ensure()
        found = {str(r[0]) for r in self._conn.execute("SELECT DISTINCT session FROM ask_vectors")}
        if self.fulltext:
            found |= {str(r[0]) for r in self._conn.execute("SELECT DISTINCT session FROM ask_texts")}
        return found

    def exists(self) -> bool:
        """Whether the tables were ever made (a store never asked anything has none)."""
        found = self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'ask_vectors'").fetchone()
        return found is not None

    def drop_sessions(self, sessions: Sequence[str]) -> int:
        """Forget every row of `sessions` (sessions deleted from the graph): the vectors
        and the searched texts. Returns the nodes forgotten (vector rows, every embedder's)."""
        if not sessions or not self.exists():
            return 0
        self.ensure()
        removed = 0
        with self._tx() as cur:
            for cond, args in self._where(sessions):
                removed += cur.execute(f"DELETE FROM ask_vectors WHERE {cond}", args).rowcount
                if self.fulltext:
                    rows = f"SELECT id FROM ask_texts WHERE {cond}"
                    cur.execute(f"DELETE FROM ask_fts WHERE rowid IN ({rows})", args)
                    cur.execute(f"DELETE FROM ask_texts WHERE {cond}", args)
                if self.tracked:
                    cur.execute(f"DELETE FROM ask_corpus WHERE {cond}", args)
                    cur.execute(f"DELETE FROM ask_matrix WHERE {cond}", args)
                    cur.execute(f"DELETE FROM ask_versions WHERE {cond}", args)
        return removed

    def vectors(self, embedder: str, sessions: Sequence[str] | None) -> list[tuple[str, str, bytes]]:
        """Every (node, text hash, vector bytes) of `sessions` (None: all) for `embedder`,
        by node id: in one read, what is indexed and the vectors to rank by."""
        self.ensure()
        found: list[tuple[str, str, bytes]] = []
        for cond, args in self._where(sessions):
            # the rows as SQLite gives them (str, str, bytes): no copy of each
            found += self._conn.execute(
                f"SELECT node, sha, vector FROM ask_vectors WHERE embedder = ? AND {cond} ORDER BY node",
                [embedder, *args],
            ).fetchall()
        return found

    def search(
        self, terms: Sequence[str], sessions: Sequence[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """The nodes whose text matches any of `terms`, best first by BM25, as (node,
        score) with higher scores better."""
        if not self.fulltext:
            raise ValueError("this index keeps no texts to search")
        expression = fts_query(terms)
        if not expression:
            return []
        self.ensure()
        found: list[tuple[str, float]] = []
        for cond, args in self._where(sessions, "t.session"):
            # bm25() is lower for a better match: negated, so that higher is better
            rows = self._conn.execute(
                "SELECT t.node, -bm25(ask_fts) AS score "
                "FROM ask_fts JOIN ask_texts t ON t.id = ask_fts.rowid "
                f"WHERE ask_fts MATCH ? AND {cond} ORDER BY score DESC LIMIT ?",
                [expression, *args, limit],
            )
            found += [(str(n), float(s)) for n, s in rows]
        found.sort(key=lambda r: -r[1])
        return found[:limit]
