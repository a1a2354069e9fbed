"""`dagmca delete`: a session leaves either store whole, a session others link to stays
unless forced, and what remains still passes `check`."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from dagmca.ask import Answer
from dagmca.cli.app import main
from dagmca.graph import PERSONA_SESSION
from dagmca.similarity import HashingEmbedder
from dagmca.store.neo4j import connect
from dagmca.store.push import push_session
from dagmca.store.sqlite import SQLiteStore
from tests.support.ask_sessions import run_fairness, run_prices
from tests.support.bolt_server import BoltServer
from tests.support.cli import dagmca
from tests.support.cypher_sessions import built_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """p0 and p1 as `dagmca build` leaves them: p0's revisit links its stub to p1's answer."""
    path = tmp_path / "corpus.db"
    store = SQLiteStore(path)
    store.init_schema()
    built_corpus(store, tmp_path / "out")
    store.close()
    return path


def one_line_error(proc: object, needle: str) -> None:
    stderr = getattr(proc, "stderr", "")
    assert getattr(proc, "returncode", None) == 2, stderr
    assert len(stderr.strip().splitlines()) == 1 and needle in stderr and "Traceback" not in stderr


@pytest.mark.slow
def test_delete_on_the_embedded_store(corpus: Path, tmp_path: Path) -> None:
    store = ("--store", str(corpus))
    with SQLiteStore(corpus) as st:
        p0_calls = len(st.calls("p0"))
        personas = len(st.nodes(PERSONA_SESSION))
    one_line_error(dagmca("delete", "p1", "--yes", *store, cwd=tmp_path), "session p1 is linked from p0")
    one_line_error(dagmca("delete", "nope", *store, cwd=tmp_path), "no session 'nope'")
    done = dagmca("delete", "p0", "--yes", *store, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "deleted p0:" in done.stdout and f"{p0_calls} call records" in done.stdout
    with SQLiteStore(corpus) as st:
        assert st.nodes("p0") == [] and st.calls("p0") == [] and [s.id for s in st.sessions()] == ["p1"]
        assert len(st.nodes(PERSONA_SESSION)) == personas
    checked = dagmca("check", "p1", *store, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_force_deletes_a_linked_session_and_its_links(corpus: Path, tmp_path: Path) -> None:
    forced = dagmca("delete", "p1", "--force", "--yes", "--store", str(corpus), cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    with SQLiteStore(corpus) as st:
        assert st.nodes("p1") == [] and st.has_session("p0")
        assert all(st.get_node(e.target) and st.get_node(e.source) for e in st.edges("p0"))


@pytest.mark.slow
def test_delete_on_the_bolt_server(corpus: Path, bolt_server: BoltServer, tmp_path: Path) -> None:
    target = bolt_server.new_target()
    with SQLiteStore(corpus) as src, connect(target) as dst:
        dst.init_schema()
        for s in ("p0", "p1"):
            push_session(src, dst, s)
    uri = f"{target.uri}/{target.database}"
    env = bolt_server.env(target)
    one_line_error(dagmca("delete", "p1", "-y", "--store", uri, cwd=tmp_path, env=env), "linked from p0")
    done = dagmca("delete", "p0", "--yes", "--store", uri, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    with connect(target) as st:
        assert st.nodes("p0") == [] and st.has_session("p1") and st.nodes(PERSONA_SESSION)
    checked = dagmca("check", "p1", "--store", uri, cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_delete_asks_first(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ("--store", str(corpus))
    # no terminal to ask on, and no --yes: refused, nothing removed
    one_line_error(dagmca("delete", "p0", *store, cwd=tmp_path), "pass --yes")
    with SQLiteStore(corpus) as st:
        assert st.has_session("p0")
    monkeypatch.setattr("dagmca.cli.db.interactive", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["delete", "p0", *store]) == 1
    with SQLiteStore(corpus) as st:
        assert st.has_session("p0")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["delete", "p0", *store]) == 0
    with SQLiteStore(corpus) as st:
        assert not st.has_session("p0") and st.has_session("p1")


def index_rows(path: Path, session: str) -> tuple[int, int, int]:
    """The session's rows in the ask index: vectors, searched texts, and FTS rows."""
    conn = sqlite3.connect(path)
    try:
        vectors = conn.execute("SELECT count(*) FROM ask_vectors WHERE session = ?", (session,)).fetchone()[0]
        texts = conn.execute("SELECT count(*) FROM ask_texts WHERE session = ?", (session,)).fetchone()[0]
        fts = (
            conn.execute("SELECT count(*) FROM ask_fts").fetchone()[0]
            - conn.execute("SELECT count(*) FROM ask_texts").fetchone()[0]
        )
    finally:
        conn.close()
    return int(vectors), int(texts), int(fts)


def test_a_deleted_session_leaves_the_ask_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("dagmca.similarity.choose.make_embedder", lambda name=None: HashingEmbedder())
    path = tmp_path / "two.db"
    with SQLiteStore(path) as st:
        st.init_schema()
        run_fairness(st, tmp_path / "out")
        run_prices(st, tmp_path / "out")
    asked = ["--store", str(path), "--all", "--retrieve-only", "--json"]
    both = ["ask", "Does the toll raise prices at shops, and are exemptions for workers fair?", *asked]
    code = ["ask", "What does Ordinance QX-4471 fix?", *asked]  # only s2 says it
    assert main(both) == 0
    before = Answer.model_validate_json(capsys.readouterr().out)
    assert {h.session for h in before.retrieved} == {"s1", "s2"}
    assert index_rows(path, "s2")[0] > 0 and index_rows(path, "s2")[1] > 0
    assert main(["delete", "s2", "--yes", "--store", str(path)]) == 0
    assert "index rows" in capsys.readouterr().out
    # the FTS rows go with their texts: none is left without one
    assert index_rows(path, "s2") == (0, 0, 0) and index_rows(path, "s1")[0] > 0
    assert main(both) == 0
    after = Answer.model_validate_json(capsys.readouterr().out)
    assert after.retrieved and {h.session for h in after.retrieved} == {"s1"}
    assert main(code) == 0
    assert all(h.session == "s1" for h in Answer.model_validate_json(capsys.readouterr().out).retrieved)
    assert main(["check", "s1", "--store", str(path)]) == 0


def test_delete_holds_no_lease_while_it_waits_for_an_answer(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer

    held: list[list[tuple[str, ...]]] = []

    def answer(*args: object, **kw: object) -> bool:  # the person thinks, the lease would lapse meanwhile
        with sqlite3.connect(corpus) as conn:
            held.append([tuple(r) for r in conn.execute("SELECT key FROM claims").fetchall()])
        return True

    monkeypatch.setattr("dagmca.cli.db.interactive", lambda: True)
    monkeypatch.setattr(typer, "confirm", answer)
    assert main(["delete", "p0", "--store", str(corpus)]) == 0
    assert held == [[]]
    with SQLiteStore(corpus) as st:
        assert not st.has_session("p0")
