"""Neo4j as a first-class store, against a real Bolt server (ArcadeDB from PyPI):
push, query, the cookbook, `run --store bolt://…`, and the errors users make."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

from dagmca.export.formats import to_json
from dagmca.graph import EdgeType, NodeKind, edge
from dagmca.store.base import GraphStore
from dagmca.store.check import check_store
from dagmca.store.neo4j import BoltTarget, Neo4jStore, connect
from dagmca.store.networkx_view import load_graph, session_records
from dagmca.store.push import push_session
from dagmca.store.query import parse_params, write_clause
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer, free_port
from tests.support.cli import dagmca
from tests.support.cookbook import load_cookbook
from tests.support.sessions import QUESTIONS, RunSession, scripted

ROOT = Path(__file__).resolve().parents[1]
COOKBOOK = ROOT / "examples" / "queries.cypher"


@pytest.fixture
def target(bolt_server: BoltServer) -> BoltTarget:
    return bolt_server.new_target()


SHOPS = "Shops in the centre lose few suburban visitors."


@pytest.fixture
def rich_session(run_fake: RunSession) -> SQLiteStore:
    """A fake session with branches, a synthesis, stubs and superseded stubs, plus the
    relations the fake does not produce here (a contradiction, a reference cycle, a
    duplicate)."""
    answers = {
        QUESTIONS[0]: "Pricing works when revenue funds buses and exemptions protect workers.",
        QUESTIONS[1]: "Pricing works when revenue funds buses and exemptions protect workers.",
        QUESTIONS[2]: f"{SHOPS} Legal ring fencing rarely lasts.",
    }

    def shops(question: str, text: str) -> tuple[str, str]:
        return ("answered", SHOPS) if question == QUESTIONS[3] and SHOPS in text else ("open", "")

    _, state, _ = run_fake(
        scripted(QUESTIONS, answers, stub=shops),
        max_branches=3, max_depth=1, max_revisits=1, rounds=1, strategy="urgent", agent_memory="store",
    )  # fmt: skip
    merged = {e.source for e in state.handles.store.edges("s1", EdgeType.MERGES_INTO)}
    assert len(merged) == 2, "two branches converged"
    b1 = sorted(merged)[0]
    b3 = next(b for b in ("s1/main/b1", "s1/main/b2", "s1/main/b3") if b not in merged)
    state.write(
        [],
        [
            edge(b1, b3, EdgeType.CONTRADICTS, "s1", similarity=0.2, method="llm", verdict="contradict"),
            edge(b1, b3, EdgeType.REFERENCES, "s1"),
            edge(b3, b1, EdgeType.REFERENCES, "s1"),
        ],
    )
    # and a stub judged a duplicate of another (these questions are all distinct)
    first, second = sorted(state.graph.tensions)[:2]
    state.write(
        [],
        [edge(second, first, EdgeType.DUPLICATES, "s1", similarity=0.7, method="llm", verdict="duplicate",
              reason="both ask who pays")],
    )  # fmt: skip
    assert isinstance(state.handles.store.store, SQLiteStore)  # the store under the run's writer thread
    return state.handles.store.store


def signature(
    store: GraphStore, session: str
) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[tuple[str, ...]]]:
    nodes = sorted((n.id, n.kind.value, n.labels) for n in store.nodes(session))
    props = {n.id: n.props for n in store.nodes(session)}
    edges = sorted(
        (e.source, e.target, e.type.value, json.dumps(e.props, sort_keys=True)) for e in store.edges(session)
    )
    return [(i, k + json.dumps(props[i], sort_keys=True), labels) for i, k, labels in nodes], edges


@pytest.mark.slow
def test_push_copies_a_session_exactly_and_twice_changes_nothing(
    rich_session: SQLiteStore, target: BoltTarget
) -> None:
    with connect(target) as dst:
        assert not dst.is_initialised()
        dst.init_schema()
        dst.init_schema()
        assert dst.is_initialised()
        first = push_session(rich_session, dst, "s1", batch=50)
        counts = dst.counts("s1") if isinstance(dst, Neo4jStore) else None
        whole = session_records(rich_session, "s1")
        assert first == (len(whole[0]), len(whole[1]))  # the personas its seats play go too
        assert counts == (len(rich_session.nodes("s1")), first[1])
        push_session(rich_session, dst, "s1", batch=50)
        assert dst.counts("s1") == counts  # type: ignore[attr-defined]
        assert signature(dst, "s1") == signature(rich_session, "s1")
        # creation order survives the copy
        assert [n.id for n in dst.nodes("s1")] == [n.id for n in rich_session.nodes("s1")]
        assert check_store(dst, "s1") == []


def test_after_a_push_the_server_holds_every_relationship_of_the_export(
    run_fake: RunSession, target: BoltTarget
) -> None:
    # every observer of the main debate asks the same question: one tension, flagged by
    # three observers at the same turn
    _, state, _ = run_fake(scripted([QUESTIONS[0]] * 9), max_branches=1, max_depth=1, rounds=1)
    src = state.handles.store.store
    flagged = Counter((e.source, e.target) for e in src.edges("s1", EdgeType.FLAGGED_AT))
    assert max(flagged.values()) >= 2, "two observers flagged the same turn"
    exported = json.loads(to_json("s1", *session_records(src, "s1")))
    with connect(target) as dst:
        dst.init_schema()
        push_session(src, dst, "s1")
        push_session(src, dst, "s1")  # a second push adds nothing
        rows = dst.run_query("MATCH ()-[r]->() WHERE r.session = $s RETURN count(r) AS n", {"s": "s1"})
        assert rows[0]["n"] == len(exported["edges"]) == len(src.edges("s1"))
        assert check_store(dst, "s1") == []


def test_every_cookbook_query_runs_and_returns_rows_where_the_session_has_the_data(
    rich_session: SQLiteStore, target: BoltTarget
) -> None:
    queries = load_cookbook(COOKBOOK)
    assert len(queries) >= 10 and len({q.name for q in queries}) == len(queries)
    g = load_graph(rich_session, "s1")
    present = {d["kind"] for _, d in g.nodes(data=True)} | {k for _, _, k in g.edges(data="type")}
    if any("Stub" in rich_session.get_node(n).labels for n in g.nodes):  # type: ignore[union-attr]
        present.add("Stub")
    refs = nx.DiGraph([(a, b) for a, b, k in g.edges(data="type") if k == EdgeType.REFERENCES.value])
    if next(nx.simple_cycles(refs), None) is not None:
        present.add("REFERENCES-cycle")
    with connect(target) as dst:
        dst.init_schema()
        push_session(rich_session, dst, "s1")
        assert isinstance(dst, Neo4jStore)
        for q in queries:
            assert q.needs, f"{q.name} declares no `needs`"
            assert write_clause(q.text) is None, f"{q.name} writes"
            if {"fulltext", "build", "ledger", "stability"} & set(q.needs):  # tested on their own
                continue
            rows = dst.run_query(q.text, {"session": "s1"})
            assert set(q.needs) <= present, f"the test session lacks {set(q.needs) - present}"
            assert rows, f"{q.name} returned no rows though the session has {q.needs}"


def test_the_cookbook_searches_the_texts(rich_session: SQLiteStore, target: BoltTarget) -> None:
    searches = [q for q in load_cookbook(COOKBOOK) if "fulltext" in q.needs]
    assert searches
    with connect(target) as dst:
        dst.init_schema()
        if not dst.has_fulltext():
            pytest.skip(f"this Bolt server has no full-text indexes: {'; '.join(dst.schema_notes)}")
        push_session(rich_session, dst, "s1")
        for q in searches:  # a word every branch answer uses
            deadline = time.monotonic() + 30  # Neo4j fills a new full-text index in the background
            while not (rows := dst.run_query(q.text, {"session": "s1", "search": "buses"})):
                assert time.monotonic() < deadline, f"{q.name} found nothing"
                time.sleep(0.5)
            assert all("buses" in str(r["text"]).lower() for r in rows)


@pytest.mark.slow
def test_run_against_bolt_end_to_end(bolt_server: BoltServer, target: BoltTarget, tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text("Cities should price road space. Critics say it is unfair.", encoding="utf-8")
    uri = f"{target.uri}/{target.database}"
    env = bolt_server.env(target)
    proc = dagmca(
        "run", str(passage), "--llm", "fake", "--store", uri, "--session", "nb", "--quiet",
        "--max-depth", "1", "--rounds", "1", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert uri in proc.stdout and bolt_server.password not in proc.stdout + proc.stderr
    check = dagmca("check", "nb", "--store", uri, cwd=tmp_path, env=env)
    assert check.returncode == 0 and check.stdout.startswith("ok:"), check.stdout + check.stderr
    with connect(target) as st:
        assert st.has_session("nb") and check_store(st, "nb") == []
        assert len(st.nodes("nb", NodeKind.TURN)) > 0
    # sessions, show and export read from the server too
    listed = dagmca("sessions", "--store", uri, cwd=tmp_path, env=env)
    assert "nb" in listed.stdout
    exported = dagmca("export", "nb", "--store", uri, "-o", str(tmp_path / "nb.json"), cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    assert bolt_server.password not in (tmp_path / "nb.json").read_text()
    # the call log and the response cache are beside the graph, in .dagmca/llm.db
    with connect(target) as st:
        labels = {
            r["label"] for r in st.run_query("MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label", {})
        }
    assert labels and not labels & {"LLMCall", "LLMCache"}
    assert labels <= {k.value for k in NodeKind} | {"Node", "Stub"}
    with SQLiteStore(tmp_path / ".dagmca" / "llm.db") as side:
        calls = side.calls("nb")
    assert calls and all(c.session == "nb" for c in calls)
    metrics = dagmca("metrics", "nb", "--store", uri, "--json", cwd=tmp_path, env=env)
    assert metrics.returncode == 0, metrics.stderr
    with sqlite3.connect(tmp_path / ".dagmca" / "llm.db") as side_db:
        kept = side_db.execute("SELECT COUNT(*) FROM llm_cache WHERE key LIKE 'embedding:%'").fetchone()[0]
    assert kept > 0, "the run's embeddings are kept beside its replies"
    pruned = dagmca("cache", "prune", "--store", uri, cwd=tmp_path, env=env)
    assert pruned.returncode == 0, pruned.stderr
    responses = len({c.key for c in calls if c.key})
    assert f"removed {responses + kept} cached responses and embeddings" in pruned.stdout
    assert "llm.db" in pruned.stdout
    bad = dagmca("cache", "prune", "--older-than", "soon", "--store", uri, cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "bad age 'soon'" in bad.stderr


@pytest.mark.slow
def test_db_init_says_what_the_server_could_not_create(
    bolt_server: BoltServer, target: BoltTarget, tmp_path: Path
) -> None:
    uri = f"{target.uri}/{target.database}"
    proc = dagmca("db", "init", "--store", uri, cwd=tmp_path, env=bolt_server.env(target))
    assert proc.returncode == 0, proc.stderr
    with connect(target) as st:
        if st.has_fulltext():  # a server with full-text indexes (Neo4j)
            assert "note:" not in proc.stdout
        else:  # ArcadeDB: said, never silent
            assert "note: no full-text index: the server refused it" in proc.stdout


@pytest.mark.slow
def test_push_and_query_from_the_command_line(
    rich_session: SQLiteStore, bolt_server: BoltServer, target: BoltTarget, tmp_path: Path
) -> None:
    uri = f"{target.uri}/{target.database}"
    env = bolt_server.env(target)
    src = rich_session.location
    outputs = [dagmca("push", "s1", "--store", src, "--to", uri, cwd=tmp_path, env=env) for _ in range(2)]
    assert all(p.returncode == 0 for p in outputs), outputs[0].stderr
    assert outputs[0].stdout.split(":")[1] == outputs[1].stdout.split(":")[1]  # same counts
    with connect(target) as st:
        assert isinstance(st, Neo4jStore)
        assert st.counts("s1") == (len(rich_session.nodes("s1")), len(rich_session.edges("s1")))

    q = "MATCH (t:Tension {session: $session}) WHERE t.urgency >= $min RETURN t.id AS id ORDER BY id"
    proc = dagmca("query", q, "--param", "session=s1", "--param", "min=0.5", "--json", "--store", uri,
                  cwd=tmp_path, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    expected = sorted(
        n.id for n in rich_session.nodes("s1", NodeKind.TENSION) if float(n.props["urgency"]) >= 0.5
    )
    assert [r["id"] for r in rows] == expected and expected

    table = dagmca("query", "MATCH (s:Session) RETURN s.id AS id, s.status AS status", "--store", uri,
                   cwd=tmp_path, env=env)  # fmt: skip
    assert table.returncode == 0 and "s1" in table.stdout and "done" in table.stdout

    refused = dagmca("query", "MATCH (n:Node) DETACH DELETE n", "--store", uri, cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "read-only" in refused.stderr
    with connect(target) as st:
        assert st.has_session("s1")
    allowed = dagmca("query", "MATCH (n:Final) SET n.note = 'seen' RETURN count(n) AS c", "--write",
                     "--store", uri, cwd=tmp_path, env=env)  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    bad = dagmca("query", "MATC (n) RETURN n", "--store", uri, cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "rejected the query" in bad.stderr and "Traceback" not in bad.stderr
    # the same query on the embedded store answers without a server, with the same rows
    embedded = dagmca("query", q, "--param", "session=s1", "--param", "min=0.5", "--json", "--store", src,
                      cwd=tmp_path)  # fmt: skip
    assert embedded.returncode == 0 and json.loads(embedded.stdout) == rows, embedded.stderr


@pytest.mark.parametrize("problem", ["unreachable", "password", "database"])
@pytest.mark.slow
def test_wrong_settings_fail_fast_with_one_line(
    problem: str, bolt_server: BoltServer, target: BoltTarget, tmp_path: Path
) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text("A short passage about something contested.", encoding="utf-8")
    env = bolt_server.env(target)
    uri = f"{target.uri}/{target.database}"
    if problem == "unreachable":
        uri = f"bolt://127.0.0.1:{free_port()}/db"
    elif problem == "password":
        env["NEO4J_PASSWORD"] = "not-the-password"
    else:
        uri = f"{target.uri}/no_such_db"
    started = time.monotonic()
    # --llm local: reaching the model would take seconds; the store is checked first.
    proc = dagmca("run", str(passage), "--llm", "local", "--store", uri, cwd=tmp_path, env=env)
    assert time.monotonic() - started < 30
    # a database that cannot be used is exit 3, as an endpoint is; a wrong name is a setting's, 2
    assert proc.returncode == {"unreachable": 3, "password": 3, "database": 2}[problem], proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    expected = {"unreachable": "cannot reach", "password": "refused the user name", "database": "no database"}
    assert expected[problem] in lines[0]
    assert bolt_server.password not in proc.stderr and "not-the-password" not in proc.stderr


def test_uri_credentials_are_used_but_never_shown() -> None:
    t = BoltTarget.parse("bolt://alice:s3cret@db.example:7687/graphs", env={})
    assert (t.user, t.password, t.database) == ("alice", "s3cret", "graphs")
    assert "s3cret" not in t.location + repr(t)
    env = {"NEO4J_USER": "bob", "NEO4J_PASSWORD": "pw", "NEO4J_DATABASE": "x"}
    assert BoltTarget.parse("neo4j://h", env=env) == BoltTarget("neo4j://h", "bob", "pw", "x")


def test_query_helpers() -> None:
    assert parse_params(["session=abc", "n=5", "xs=[1,2]", "s=\"5\""]) == {
        "session": "abc", "n": 5, "xs": [1, 2], "s": "5",
    }  # fmt: skip
    assert write_clause("MATCH (n) WHERE n.text CONTAINS 'CREATE' RETURN n // DELETE") is None
    assert write_clause("match (n) detach delete n") == "DETACH"
    assert write_clause("MATCH (n) SET n.x = 1") == "SET"
    assert write_clause("MATCH (n:`SET`) RETURN n.offset") is None


def test_the_browser_style_sheet_styles_every_kind_and_edge_type() -> None:
    import re

    text = re.sub(r"/\*.*?\*/", "", (ROOT / "examples" / "dagmca.grass").read_text(), flags=re.DOTALL)
    rule = r"([\w.]+)\s*\{((?:[^{}\"]|\"[^\"]*\")*)\}"  # braces may sit inside quoted captions
    blocks = re.findall(rule, text)
    assert re.sub(rule, "", text).strip() == "", "text outside a rule"
    for _, body in blocks:
        for decl in filter(None, (d.strip() for d in re.split(r";(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", body))):
            assert re.fullmatch(r"[a-z-]+:\s*(#[0-9A-F]{6}|\d+px|\"[^\"]*\")", decl), decl
    selectors = {s for s, _ in blocks}
    assert {f"node.{k.value}" for k in NodeKind} | {"node.Stub"} <= selectors
    assert {f"relationship.{t.value}" for t in EdgeType} <= selectors
