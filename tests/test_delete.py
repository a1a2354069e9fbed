"""`dagmca delete`: a session leaves either store whole, a session others link to stays
unless forced, and what remains still passes `check`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmca.models import PERSONA_SESSION
from dagmca.store.neo4j import connect
from dagmca.store.push import push_session
from dagmca.store.sqlite import SQLiteStore
from tests.bolt_server import BoltServer
from tests.cypher_sessions import built_corpus
from tests.test_cli import dagmca


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


def test_delete_on_the_embedded_store(corpus: Path, tmp_path: Path) -> None:
    store = ("--store", str(corpus))
    with SQLiteStore(corpus) as st:
        p0_calls = len(st.calls("p0"))
        personas = len(st.nodes(PERSONA_SESSION))
    one_line_error(dagmca("delete", "p1", *store, cwd=tmp_path), "session p1 is linked from p0")
    one_line_error(dagmca("delete", "nope", *store, cwd=tmp_path), "no session 'nope'")
    done = dagmca("delete", "p0", *store, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "deleted p0:" in done.stdout and f"{p0_calls} call records" in done.stdout
    with SQLiteStore(corpus) as st:
        assert st.nodes("p0") == [] and st.calls("p0") == [] and [s.id for s in st.sessions()] == ["p1"]
        assert len(st.nodes(PERSONA_SESSION)) == personas
    checked = dagmca("check", "p1", *store, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_force_deletes_a_linked_session_and_its_links(corpus: Path, tmp_path: Path) -> None:
    forced = dagmca("delete", "p1", "--force", "--store", str(corpus), cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    with SQLiteStore(corpus) as st:
        assert st.nodes("p1") == [] and st.has_session("p0")
        assert all(st.get_node(e.target) and st.get_node(e.source) for e in st.edges("p0"))


def test_delete_on_the_bolt_server(corpus: Path, bolt_server: BoltServer, tmp_path: Path) -> None:
    target = bolt_server.new_target()
    with SQLiteStore(corpus) as src, connect(target) as dst:
        dst.init_schema()
        for s in ("p0", "p1"):
            push_session(src, dst, s)
    uri = f"{target.uri}/{target.database}"
    env = bolt_server.env(target)
    one_line_error(dagmca("delete", "p1", "--store", uri, cwd=tmp_path, env=env), "linked from p0")
    done = dagmca("delete", "p0", "--store", uri, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    with connect(target) as st:
        assert st.nodes("p0") == [] and st.has_session("p1") and st.nodes(PERSONA_SESSION)
    checked = dagmca("check", "p1", "--store", uri, cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
