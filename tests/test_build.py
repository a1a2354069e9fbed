"""`dagmca build`: many passages into one store, under one rate limit, resumable, with
stubs checked across passages, and safe with several workers on one store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dagmca.corpus.sources import collect, session_id
from dagmca.graph import EdgeType
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer
from tests.support.cli import dagmca
from tests.support.determinism import relative
from tests.support.fault_server import FaultServer, most_in_window
from tests.support.resume import cached_keys, kill_when, preflight_keys
from tests.support.sandbox import process_env
from tests.support.sessions import PASSAGE

ROOT = Path(__file__).parent.parent
TEXTS = (
    ROOT / "examples" / "free_will.txt",
    ROOT / "examples" / "congestion_pricing.txt",
    ROOT / "tests" / "data" / "four_day_week.txt",
    ROOT / "tests" / "data" / "street_trees.txt",
)
KEY = "sk-test-build"
SMALL = ["--cpp", "2", "--depth", "1", "--rounds", "2", "--observers", "skeptical,dialectical"]
SMALL += ["--max-branches", "1", "--max-depth", "1"]


def corpus(folder: Path, texts: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (folder / f"passage_{i}.txt").write_text(text, encoding="utf-8")
    return folder


# -- the passages ------------------------------------------------------------------------
def test_passages_from_folders_and_jsonl_with_bad_ones_reported(tmp_path: Path) -> None:
    (tmp_path / "essays" / "sub").mkdir(parents=True)
    (tmp_path / "essays" / "a.txt").write_text("First essay. It argues.", encoding="utf-8")
    (tmp_path / "essays" / "sub" / "a.md").write_text("# Second\nAnother text.", encoding="utf-8")
    (tmp_path / "essays" / "notes.pdf").write_bytes(b"%PDF")  # not a text file: not looked at
    (tmp_path / "essays" / "empty.txt").write_text("  \n", encoding="utf-8")
    (tmp_path / "essays" / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "copy.txt").write_text("First essay. It argues.", encoding="utf-8")
    lines = [
        json.dumps({"id": "memo 1/2", "text": "A memo on policy."}),
        "not json",
        json.dumps({"id": "x", "body": "no text field"}),
        json.dumps({"id": "memo 1/2", "text": "Another memo with the same id."}),
        "",
    ]
    (tmp_path / "memos.jsonl").write_text("\n".join(lines), encoding="utf-8")
    passages, skipped = collect(
        [tmp_path / "essays", tmp_path / "copy.txt", tmp_path / "memos.jsonl"], max_bytes=10_000
    )
    assert [p.id for p in passages] == ["a", "sub-a", "memo-1-2"]
    assert passages[1].title == "Second" and passages[2].source.endswith("memos.jsonl#memo 1/2")
    reasons = {Path(s.source.split(":")[0].split("#")[0]).name: s.reason for s in skipped}
    assert set(reasons) == {"empty.txt", "latin1.txt", "copy.txt", "memos.jsonl"}
    assert "same text" in reasons["copy.txt"]
    assert sum("memos.jsonl" in s.source for s in skipped) == 3  # not JSON, no text, id taken
    again, _ = collect([tmp_path / "essays", tmp_path / "copy.txt", tmp_path / "memos.jsonl"], 10_000)
    assert [p.id for p in again] == [p.id for p in passages], "ids are stable"
    assert session_id("???", "text").startswith("passage-")
    assert len(session_id("x" * 200, "t")) == 64


@pytest.mark.slow
def test_a_build_with_nothing_to_read_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = dagmca("build", str(tmp_path / "empty"), "--llm", "fake", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("dagmca: error: no passage to build")
    missing = dagmca("build", str(tmp_path / "nope"), "--llm", "fake", cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


# -- the must-show: 4 passages, --rpm 120, killed, resumed, run again ----------------------
@pytest.mark.slow
def test_a_rate_limited_build_killed_resumes_and_then_makes_no_call(tmp_path: Path) -> None:
    folder = corpus(tmp_path / "corpus", [t.read_text(encoding="utf-8") for t in TEXTS])
    db = tmp_path / "graph.db"
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""}
    with FaultServer(latency_s=0.05, rpm_limit=120) as server:
        argv = ["build", str(folder), "--store", str(db), "--llm", "openai", "--model", "fault-model"]
        argv += ["--base-url", server.base_url, "--rpm", "120", "--parallel-sessions", "2", "--quiet", *SMALL]
        argv += ["--observer-calls", "per-lens"]  # enough calls for the limit to matter
        kill_when(argv, lambda: server.requests >= 70, cwd=tmp_path, env=env)
        finished = cached_keys(db)
        before = Counter(server.served)

        resumed = dagmca(*argv, "--json", cwd=tmp_path, env=env, timeout=400)
        assert resumed.returncode == 0, resumed.stderr
        asked_again = set(server.served - before) - preflight_keys(server)
        assert not asked_again & finished, "a finished call was asked again"
        report = json.loads(resumed.stdout)
        statuses = [p["status"] for p in report["passages"]]
        assert set(statuses) <= {"done", "finished earlier"} and "done" in statuses, statuses
        assert report["totals"]["stubs_checked_across"] > 0

        # never above the limit, over any minute (both runs), and spaced, not in bursts
        assert server.requests > 120, "enough requests for the minute to matter"
        assert most_in_window(server.arrivals, 60.0) <= 120
        assert most_in_window(server.arrivals, 10.0) <= 21
        assert server.over_limit == 0, "the endpoint never had to refuse a request"

        requests = server.requests
        third = dagmca(*argv, "--json", cwd=tmp_path, env=env)
        assert third.returncode == 0, third.stderr
        assert server.requests == requests, "a finished build makes no call"
        assert {p["status"] for p in json.loads(third.stdout)["passages"]} == {"finished earlier"}

    with SQLiteStore(db) as st:
        sessions = {s.id: s for s in st.sessions()}
        assert set(sessions) == {"passage_0", "passage_1", "passage_2", "passage_3"}
        assert all(s.props["status"] == "done" and s.props.get("linked_at") for s in sessions.values())
        across = [
            e
            for sid in sessions
            for e in st.edges(sid, EdgeType.CHECKED_AGAINST)
            if e.target in sessions and e.target != sid
        ]
        assert across, "an earlier session's stub was checked against a later passage"
        assert all(sessions[e.target].props["source"].endswith(".txt") for e in across)
        # only later passages answer earlier stubs
        order = sorted(sessions)
        assert all(order.index(e.target) > order.index(e.session) for e in across)
        for sid in sessions:
            assert check_store(st, sid) == [], sid


# -- three workers, one store -------------------------------------------------------------
@pytest.mark.slow
def test_three_workers_run_every_passage_exactly_once(tmp_path: Path) -> None:
    texts = [f"{PASSAGE}\n\nVariant {i}: the council considers option {i} first." for i in range(6)]
    folder = corpus(tmp_path / "six", texts)
    db = tmp_path / "shared.db"
    argv = ["build", str(folder), "--store", str(db), "--llm", "fake", "--json", *SMALL]
    init = dagmca("db", "init", "--store", str(db), cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "dagmca", *argv],
            cwd=tmp_path,
            env=process_env({}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    reports = []
    for w in workers:
        stdout, stderr = w.communicate(timeout=300)
        assert w.returncode == 0, stderr
        reports.append(json.loads(stdout))
    ran = Counter(p["session"] for r in reports for p in r["passages"] if p["ran"])
    assert ran == Counter({f"passage_{i}": 1 for i in range(6)}), ran
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0, "every claim released"
    with SQLiteStore(db) as st:
        assert all(s.props["status"] == "done" and s.props.get("linked_at") for s in st.sessions())
        assert len(st.sessions()) == 6


@pytest.mark.slow
def test_budgets_bound_the_whole_build_as_well_as_each_session(tmp_path: Path) -> None:
    """Unbudgeted, the first passage here takes about 50 calls (the later ones more: they
    also check the earlier sessions' stubs): with --max-llm-calls 60 the first ends within
    it, and the second is stopped by the build's total, not its own."""
    folder = corpus(tmp_path / "three", [f"{PASSAGE}\n\nCase {i}." for i in range(3)])
    db = tmp_path / "budget.db"
    proc = dagmca(
        "build", str(folder), "--store", str(db), "--llm", "fake", "--json", "--max-llm-calls", "60", *SMALL,
        "--parallel-sessions", "1", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    calls = [p["calls"] for p in report["passages"]]
    with SQLiteStore(db) as st:
        statuses = [st.get_node(p["session"]).props["status"] for p in report["passages"]]  # type: ignore[union-attr]
    assert statuses == ["done", "budget_exhausted", "budget_exhausted"], (statuses, calls)
    assert calls[1] < 60, "the second session was stopped by the build's budget, not its own"
    # each session may still write its final answer once the budget is spent
    assert report["totals"]["calls"] <= 60 + len(calls), calls


# -- across passages, on the Bolt server, with the cookbook's corpus queries ---------------
@pytest.mark.slow
def test_a_later_passage_answers_an_earlier_stub_on_bolt(bolt_server: BoltServer, tmp_path: Path) -> None:
    from dagmca.config import SessionConfig
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import Passage
    from dagmca.llm.fake import ScriptedLLM
    from dagmca.store.neo4j import Neo4jStore, connect
    from tests.support.cookbook import load_cookbook
    from tests.support.opened import run_build
    from tests.support.sessions import QUESTIONS, lens_by_lens, scripted

    shops = "Shops in the centre lose few suburban visitors."

    def answers_shops(question: str, text: str) -> tuple[str, str]:
        return ("answered", shops) if question == QUESTIONS[3] and shops in text else ("open", "")

    cfg = SessionConfig(
        llm="fake",
        max_branches=3,
        max_depth=1,
        max_revisits=1,
        rounds=1,
        strategy="urgent",
        stub_prefilter=0.0,
    )
    first = Passage("p0", "p0.txt", PASSAGE, "Congestion pricing")
    later = Passage("p1", "p1.txt", f"A survey of retailers. {shops} Parking matters more.", "Retail survey")
    with connect(bolt_server.new_target()) as store:
        store.init_schema()
        job = Build(cfg, store, [first, later], reports=lambda s: tmp_path / s)
        todo = job.plan()
        llm = ScriptedLLM(lens_by_lens(scripted(QUESTIONS[:4], stub=answers_shops)))
        run_build(job, todo, store, llm)
        assert [o.status for o in job.outcomes.values()] == ["done", "done"]
        answered = [k for k in job.links if k.kind == "answered"]
        assert [(k.passage, k.session) for k in answered] == [("p1", "p0")]
        stub = store.get_node(answered[0].node)
        assert stub is not None and stub.props["status"] == "superseded"
        supersedes = [e for e in store.edges("p0", EdgeType.SUPERSEDES) if e.source == "p1"]
        assert supersedes and supersedes[0].props["claim"] == shops
        assert check_store(store, "p0") == [] and check_store(store, "p1") == []
        assert isinstance(store, Neo4jStore)
        corpus_queries = [
            q for q in load_cookbook(ROOT / "examples" / "queries.cypher") if "build" in q.needs
        ]
        assert len(corpus_queries) >= 3
        for q in corpus_queries:
            rows = store.run_query(q.text, {})
            assert rows, f"{q.name} found nothing in a built corpus"
        found = store.run_query(corpus_queries[0].text, {})
        assert found[0]["answered_by"] == "p1" and found[0]["answering_sentence"] == shops


@pytest.mark.slow
def test_export_and_show_all_cover_the_whole_store(tmp_path: Path) -> None:
    folder = corpus(tmp_path / "two", [t.read_text(encoding="utf-8") for t in TEXTS[:2]])
    db = tmp_path / "all.db"
    built = dagmca("build", str(folder), "--store", str(db), "--llm", "fake", "--quiet", *SMALL, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "across passages:" in built.stdout and "open stubs of earlier sessions checked" in built.stdout
    out = tmp_path / "all.json"
    exported = dagmca("export", "--all", "-f", "json", "-o", str(out), "--store", str(db), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    with SQLiteStore(db) as st:
        ids = {n.id for s in st.sessions() for n in st.nodes(s.id)} | {n.id for n in st.nodes("_agents")}
        edges = sum(len(st.edges(s.id)) for s in st.sessions())
    assert {n["id"] for n in data["nodes"]} == ids
    assert len(data["edges"]) == edges
    assert any(e["source"].startswith("passage_0/") and e["target"] == "passage_1" for e in data["edges"])
    shown = dagmca("show", "--all", "--store", str(db), cwd=tmp_path)
    assert shown.returncode == 0 and "across sessions" in shown.stdout
    assert "passage_0" in shown.stdout and "passage_1" in shown.stdout
    neither = dagmca("export", "--store", str(db), cwd=tmp_path)
    assert neither.returncode == 2 and "give a session id or --all" in neither.stderr


@pytest.mark.slow
def test_the_corpus_graph_does_not_depend_on_parallel_sessions(tmp_path: Path) -> None:
    """Linking runs in passage order, with revisit branches handed out before the
    checks: sessions run one at a time or three at once build the same graph (with each
    session's agents starting from zero; with agents that persist, what a session
    remembers depends on which passages ended before it started)."""
    folder = corpus(tmp_path / "three", [t.read_text(encoding="utf-8") for t in TEXTS[:3]])
    graphs = []
    for parallel in ("1", "3"):
        db = tmp_path / f"p{parallel}.db"
        proc = dagmca(
            "build", str(folder), "--store", str(db), "--llm", "fake", "--quiet", "--agent-memory", "session",
            "--parallel-sessions", parallel, "--max-revisits", "2", *SMALL, cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        with SQLiteStore(db) as st:
            graphs.append({s.id: relative(st, s.id) for s in st.sessions()})
            across = sum(
                e.target in graphs[-1] for sid in graphs[-1] for e in st.edges(sid, EdgeType.CHECKED_AGAINST)
            )
    assert across > 0, "stubs were checked across passages"
    assert graphs[0] == graphs[1]


def test_a_passage_claim_another_worker_took_stops_the_build_with_one_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import pytest

    import dagmca.store.lease as leases
    from dagmca.api import Workspace
    from dagmca.errors import SessionBusy
    from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
    from dagmca.similarity import HashingEmbedder

    monkeypatch.setattr(leases, "RENEW_S", 0.05)
    folder = corpus(tmp_path / "one", [PASSAGE])
    db = tmp_path / "g.db"
    with SQLiteStore(db) as st:
        st.init_schema()

    def steal(call: ScriptedCall) -> Any:  # mid-run, another worker holds the passage
        with sqlite3.connect(db) as conn:
            conn.execute(
                "UPDATE claims SET worker = 'elsewhere:77:theirs', expires = 1e18 WHERE key != '_link'"
            )
        return default_responder(call)

    client = ScriptedLLM(steal, delay=0.05)

    async def build() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            await ws.build([folder], client=client, llm="fake", cpp=2, rounds=2)

    with pytest.raises(SessionBusy, match="77@elsewhere"):
        asyncio.run(build())
    made = len(client.calls)
    assert made < 40  # stopped at the next renewal, not run to its end


def test_a_build_whose_linking_aborts_releases_every_claim(tmp_path: Path, monkeypatch: Any) -> None:
    import pytest

    import dagmca.corpus.build as building
    from dagmca.api import Workspace
    from dagmca.llm.fake import ScriptedLLM
    from dagmca.similarity import HashingEmbedder

    def broken(*args: Any) -> Any:
        raise RuntimeError("linking broke")

    monkeypatch.setattr(building, "finished_others", broken)
    folder = corpus(tmp_path / "two", [PASSAGE, f"{PASSAGE}\n\nA second reading."])
    db = tmp_path / "g.db"

    async def build() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            await ws.build([folder], client=ScriptedLLM(), llm="fake", cpp=2, rounds=2)

    with pytest.raises(RuntimeError, match="linking broke"):
        asyncio.run(build())
    with sqlite3.connect(db) as conn:  # a passage left linking is free for the next worker at once
        assert conn.execute("SELECT key FROM claims").fetchall() == []
