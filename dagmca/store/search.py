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
        self._ready = False

    def ensure(self) -> None:
        """Make the tables when missing. Idempotent."""
        if not self._ready:
            self._conn.executescript(_TABLES + (_FULLTEXT if self.fulltext else ""))
            self._ready = True

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

    def drop_sessions(self, sessions: Sequence[str]) -> None:
        """Forget every row of `sessions` (sessions deleted from the graph)."""
        if not sessions:
            return
        self.ensure()
        with self._tx() as cur:
            for cond, args in self._where(sessions):
                cur.execute(f"DELETE FROM ask_vectors WHERE {cond}", args)
                if self.fulltext:
                    rows = f"SELECT id FROM ask_texts WHERE {cond}"
                    cur.execute(f"DELETE FROM ask_fts WHERE rowid IN ({rows})", args)
                    cur.execute(f"DELETE FROM ask_texts WHERE {cond}", args)

    def vectors(self, embedder: str, sessions: Sequence[str] | None) -> list[tuple[str, str, bytes]]:
        """Every (node, text hash, vector bytes) of `sessions` (None: all) for `embedder`,
        by node id: in one read, what is indexed and the vectors to rank by."""
        self.ensure()
        found: list[tuple[str, str, bytes]] = []
        for cond, args in self._where(sessions):
            rows = self._conn.execute(
                f"SELECT node, sha, vector FROM ask_vectors WHERE embedder = ? AND {cond} ORDER BY node",
                [embedder, *args],
            )
            found += [(str(n), str(h), bytes(v)) for n, h, v in rows]
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
