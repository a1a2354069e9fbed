"""The corpus snapshots `ask` keeps in the index: a second ask of an unchanged session
reads no node, gets what reading the graph gives, and any write to the session's
graph (from any connection) makes the next ask read the graph again."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dagmca.ask import retrieve
from dagmca.ask.asking import Retrieval
from dagmca.ask.corpus import Corpus, part_of, scope_of
from dagmca.ask.snapshot import decode, encode, load_corpus
from dagmca.similarity import HashingEmbedder
from dagmca.store.deletion import delete_session
from dagmca.store.search import TextIndex
from dagmca.store.sqlite import SQLiteStore
from tests.support.ask_sessions import run_prices
from tests.support.sessions import run_scripted
from tests.support.strong_fake import LONG_PASSAGE

QUESTION = "Does the toll raise prices at shops?"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("snapshot")
    with SQLiteStore(root / "s2.db") as store:
        store.init_schema()
        run_prices(store, root / "out")
    return root / "s2.db"


@pytest.fixture
def path(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(pristine, tmp_path / "s2.db"))


def retrieved(store: SQLiteStore, question: str = QUESTION) -> Retrieval:
    return asyncio.run(retrieve(store, question, embedder=HashingEmbedder(), sessions=["s2"]))


def summary(found: Retrieval) -> Any:
    return [(h.id, h.label, h.text) for h in found.retrieved], found.dissent.model_dump()


def test_an_unchanged_session_is_read_from_its_snapshot(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SQLiteStore(path) as store:
        first = retrieved(store)
        full = Corpus.load(store, scope_of(store, ["s2"]))
        monkeypatch.setattr(SQLiteStore, "nodes", lambda *a, **k: pytest.fail("read the graph"))
        again = retrieved(store)
        assert summary(again) == summary(first) and again.index.embedded == 0
        kept = load_corpus(store, scope_of(store, ["s2"]))
        assert kept.entries.keys() == full.entries.keys() and kept.ids == full.ids
        assert [e.label for e in kept.entries.values()] == [e.label for e in full.entries.values()]
        assert kept.open_stubs_of == full.open_stubs_of and kept.contradicts == full.contradicts


def test_a_write_from_another_connection_is_seen(path: Path) -> None:
    with SQLiteStore(path) as store:
        before = retrieved(store)
        [stub] = before.dissent.open_questions
        # another process's store on the same file closes the stub
        with SQLiteStore(path) as other:
            node = other.get_node(stub.id)
            assert node is not None
            other.write([node.model_copy(update={"props": {**node.props, "status": "explored"}})])
        after = retrieved(store)
        assert stub.id not in {q.id for q in after.dissent.open_questions}
        assert after.index.embedded == 0  # its text did not change


def test_a_snapshot_of_another_format_is_read_afresh(path: Path) -> None:
    with SQLiteStore(path) as store:
        part = load_corpus(store, scope_of(store, ["s2"]))
        assert part.entries
        text = encode(part_of(store, "s2"))
        assert decode("s2", text) is not None
        assert decode("s2", text.replace('"format":1', '"format":0')) is None
        assert decode("s2", "not json") is None


def test_a_second_ask_in_one_process_reads_neither_snapshot_nor_vectors(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(path) as store:
        first = retrieved(store)
        reads: list[str] = []
        snapshot, matrix = TextIndex.snapshot, TextIndex.matrix
        monkeypatch.setattr(
            TextIndex, "snapshot", lambda self, *a: reads.append("snapshot") or snapshot(self, *a)
        )
        monkeypatch.setattr(TextIndex, "matrix", lambda self, *a: reads.append("matrix") or matrix(self, *a))
        again = retrieved(store)
        assert reads == [] and summary(again) == summary(first) and again.index.embedded == 0
        # a write moves the session's version: the next ask reads both again
        [stub] = first.dissent.open_questions
        node = store.get_node(stub.id)
        assert node is not None
        store.write([node.model_copy(update={"props": {**node.props, "status": "explored"}})])
        after = retrieved(store)
        assert stub.id not in {q.id for q in after.dissent.open_questions}
        assert "snapshot" in reads and "matrix" in reads
    with SQLiteStore(path) as fresh:  # another store object (another process): its own reads
        reads.clear()
        assert summary(retrieved(fresh)) == summary(after) and reads.count("matrix") == 1


def test_a_session_deleted_and_run_again_under_its_id_is_read_afresh(path: Path, tmp_path: Path) -> None:
    with SQLiteStore(path) as store:
        first = retrieved(store)
        [version] = store.text_index().versions(["s2"]).values()
        # deleting forgets the session's version: the new s2 counts from 1 again, and may
        # reach the number the first one was kept at
        delete_session(store, "s2")
        run_scripted(store, tmp_path / "out", session="s2", passage=LONG_PASSAGE)
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("UPDATE ask_versions SET version = ? WHERE session = 's2'", (version,))
        conn.close()
        again = retrieved(store, "Does a four-day week keep output per hour?")
        assert summary(again) != summary(first)
    with SQLiteStore(path) as fresh:
        assert summary(retrieved(fresh, "Does a four-day week keep output per hour?")) == summary(again)
