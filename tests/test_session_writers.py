"""Sessions under concurrency, as users run them (subprocesses, one real SQLite store):
two runs never share an id, and a session has one writer at a time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dagmca.reports.writers import write_json
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.fault_server import FaultServer
from tests.support.sandbox import process_env
from tests.support.sessions import PASSAGE

SMALL = ["--cpp", "2", "--rounds", "2", "--max-branches", "1", "--max-depth", "1", "--max-revisits", "0"]


def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dagmca", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(env),
    )


@pytest.mark.slow  # dagmca processes
def test_two_runs_started_in_the_same_second_make_two_sessions(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    argv = ["run", str(passage), "--llm", "fake", "--quiet", "--store", str(db), *SMALL]
    procs = [start(*argv, cwd=tmp_path) for _ in range(2)]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    with SQLiteStore(db) as st:
        ids = [s.id for s in st.sessions()]
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    for sid in ids:
        check = subprocess.run(
            [sys.executable, "-m", "dagmca", "check", sid, "--store", str(db)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=process_env(),
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr


class Stall:
    """An endpoint hook that holds every chat request from the `at`-th on until
    `release` is set: the run is then mid-debate, with its session in the store."""

    def __init__(self, at: int) -> None:
        self.at, self.seen = at, 0
        self.lock = threading.Lock()
        self.reached, self.release = threading.Event(), threading.Event()

    def __call__(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.seen += 1
            held = self.seen >= self.at
        if held:
            self.reached.set()
            self.release.wait(120)


def endpoint(server: FaultServer) -> list[str]:
    return ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]


ENV = {"OPENAI_API_KEY": "sk-test-writers", "OPENAI_BASE_URL": ""}


def one_line_refusal(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dagmca: error:"), proc.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


@pytest.mark.slow  # dagmca processes
def test_a_run_and_a_resume_of_one_session_at_once_one_is_refused_and_check_passes(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    stall = Stall(at=6)
    with FaultServer(on_request=stall) as server:
        run = start(
            "run", str(passage), "--store", str(db), "--session", "s1", "--quiet", *endpoint(server), *SMALL,
            cwd=tmp_path, env=ENV,
        )  # fmt: skip
        try:
            assert stall.reached.wait(120), "the run never reached the debate"
            resumed = dagmca("resume", "s1", "--store", str(db), cwd=tmp_path, env=ENV)
            line = one_line_refusal(resumed, "s1", f"{run.pid}@{socket.gethostname()}")
            assert "being written by another process" in line
            revisited = dagmca("revisit", "s1", "--store", str(db), cwd=tmp_path, env=ENV)
            one_line_refusal(revisited, f"{run.pid}@")
            deleted = dagmca("delete", "s1", "--yes", "--store", str(db), cwd=tmp_path, env=ENV)
            one_line_refusal(deleted, f"{run.pid}@")
        finally:
            stall.release.set()
            _, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
    with SQLiteStore(db) as st:
        assert check_store(st, "s1") == []


@pytest.mark.slow  # dagmca processes
def test_a_dead_holders_lease_is_taken_over_and_a_live_ones_refuses(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    base = ["--llm", "fake", "--quiet", "--store", str(db), "--session", "s2", *SMALL]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])  # a pid that is gone
    gone.wait()
    with SQLiteStore(db) as st:
        st.init_schema()
        st.claim("s2", f"{socket.gethostname()}:{gone.pid}:abcdef", 600)
    assert dagmca("run", str(passage), *base, cwd=tmp_path).returncode == 0
    with SQLiteStore(db) as st:  # this test's own process, alive: its lease holds
        st.claim("s2", f"{socket.gethostname()}:{os.getpid()}:abcdef", 600)
    holder = f"{os.getpid()}@{socket.gethostname()}"
    for command in (["delete", "s2", "--yes"], ["ledger", "s2", "--ledger", "all"], ["revisit", "s2"]):
        one_line_refusal(dagmca(*command, "--store", str(db), cwd=tmp_path), holder)
    with SQLiteStore(db) as st:  # given up, the session is free again
        st.release("s2", f"{socket.gethostname()}:{os.getpid()}:abcdef")
    assert dagmca("delete", "s2", "--yes", "--store", str(db), cwd=tmp_path).returncode == 0


@pytest.mark.slow  # dagmca processes
def test_a_revisit_of_an_interrupted_session_is_refused_saying_to_resume_it(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    stall = Stall(at=6)
    with FaultServer(on_request=stall) as server:
        run = start(
            "run", str(passage), "--store", str(db), "--session", "s3", "--quiet", *endpoint(server), *SMALL,
            cwd=tmp_path, env=ENV,
        )  # fmt: skip
        try:
            assert stall.reached.wait(120), "the run never reached the debate"
            run.send_signal(signal.SIGINT)
            time.sleep(0.5)
        finally:
            stall.release.set()
            _, stderr = run.communicate(timeout=300)
        assert run.returncode == 130, stderr
        # the hint names every option `resume` needs: the store is not the default one
        assert f"dagmca resume s3 --store {db}" in stderr
        revisited = dagmca("revisit", "s3", "--store", str(db), cwd=tmp_path, env=ENV)
        one_line_refusal(revisited, "s3 is not finished (interrupted)", "dagmca resume s3")
        finished = dagmca("resume", "s3", "--store", str(db), "--quiet", cwd=tmp_path, env=ENV)
        assert finished.returncode == 0, finished.stderr
    assert dagmca("check", "s3", "--store", str(db), cwd=tmp_path).returncode == 0


@pytest.mark.slow  # dagmca processes
def test_run_with_an_existing_sessions_id_continues_it_only_with_its_settings(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    base = ["run", str(passage), "--llm", "fake", "--quiet", "--store", str(db), "--session", "s4"]
    assert dagmca(*base, *SMALL, cwd=tmp_path).returncode == 0
    other = dagmca(*base, *SMALL[:-2], "--max-revisits", "1", cwd=tmp_path)
    one_line_refusal(other, "other settings", "max_revisits 1 (the session's: 0)", "dagmca resume s4")
    same = dagmca(*base, *SMALL, cwd=tmp_path)
    one_line_refusal(same, "s4 already exists", "is done")


@pytest.mark.slow  # dagmca processes
def test_concurrent_atomic_writes_of_one_file_never_lose_their_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    failures: list[OSError] = []

    def write(n: int) -> None:
        try:
            for i in range(300):
                write_json(target, {"writer": n, "i": i})
        except OSError as exc:  # what the old shared temp name raised: FileNotFoundError
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert json.loads(target.read_text())["i"] == 299
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_an_eval_never_writes_a_session_another_live_process_holds(tmp_path: Path) -> None:
    import asyncio

    import pytest

    from dagmca.api import EvalOptions, Workspace
    from dagmca.errors import SessionBusy
    from dagmca.evaluation import Task
    from dagmca.evaluation.arms import parse_arms, session_id
    from dagmca.llm.fake import ScriptedLLM
    from dagmca.similarity import HashingEmbedder

    db = tmp_path / "e.db"
    task = Task(id="t0", question="What is 1 + 1?", answer="2")
    [arm] = parse_arms("single", {})
    sid = session_id("ev-held", arm, "t0", 0)
    with SQLiteStore(db) as st:  # a live process elsewhere writes the eval's session
        st.init_schema()
        assert st.claim(sid, "elsewhere:4242:abcdef", 600) == "elsewhere:4242:abcdef"

    async def once() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            await ws.eval(
                [task],
                options=EvalOptions(arms="single", eval_id="ev-held"),
                client=ScriptedLLM(),
                llm="fake",
            )

    with pytest.raises(SessionBusy, match="4242@elsewhere"):
        asyncio.run(once())
    with SQLiteStore(db) as st:
        assert st.get_node(sid) is None  # refused before it wrote anything


class FlakyStore:
    """A store thread whose reads fail as a busy SQLite file does, for the reads `failing` picks."""

    def __init__(self, db: Path, failing: set[int]) -> None:
        from dagmca.store.background import BackgroundStore

        self.inner = BackgroundStore(SQLiteStore(db))
        self.failing, self.reads, self.answered = failing, 0, 0

    async def aread(self, fn: Any) -> Any:
        import sqlite3

        self.reads += 1
        if self.reads in self.failing:
            raise sqlite3.OperationalError("database is locked")
        found = await self.inner.aread(fn)
        self.answered += 1
        return found


def lease_env(monkeypatch: Any, ttl_s: float = 120.0) -> None:
    import dagmca.store.lease as leases

    monkeypatch.setattr(leases, "RENEW_S", 0.05)
    monkeypatch.setattr(leases, "RETRY_S", 0.02)
    monkeypatch.setattr(leases, "LEASE_TTL_S", ttl_s)
    monkeypatch.setattr(leases, "holder_id", lambda: f"{socket.gethostname()}:{os.getpid()}:mine")


def test_a_lease_renewal_the_store_refuses_is_tried_again(tmp_path: Path, monkeypatch: Any) -> None:
    import asyncio

    from dagmca.store.lease import held

    lease_env(monkeypatch)
    db = tmp_path / "g.db"
    with SQLiteStore(db) as st:
        st.init_schema()
    store = FlakyStore(db, failing={2, 3})  # the first two renewals: "database is locked"

    async def work() -> int:
        async with held(store, "s1"):  # type: ignore[arg-type]
            await asyncio.sleep(0.6)
            return store.answered

    try:
        assert asyncio.run(work()) >= 3  # acquired, then renewed after the failures
    finally:
        store.inner.close()


def test_a_lease_taken_by_another_stops_the_work_with_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    import asyncio

    import pytest

    from dagmca.errors import SessionBusy
    from dagmca.store.background import BackgroundStore
    from dagmca.store.lease import held

    lease_env(monkeypatch)
    db = tmp_path / "g.db"
    with SQLiteStore(db) as st:
        st.init_schema()
    store = BackgroundStore(SQLiteStore(db))
    ran: list[str] = []

    async def work() -> None:
        async with held(store, "s1"):
            with SQLiteStore(db) as other:  # its lease expired, say, and another took it
                other.claim(
                    "s1", "elsewhere:77:theirs", 600, replacing=f"{socket.gethostname()}:{os.getpid()}:mine"
                )
            await asyncio.sleep(3)
            ran.append("went on writing")

    try:
        with pytest.raises(SessionBusy, match="77@elsewhere"):
            asyncio.run(work())
    finally:
        store.close()
    assert ran == []


def test_a_lease_the_store_never_renews_stops_the_work_once_expired(tmp_path: Path, monkeypatch: Any) -> None:
    import asyncio

    import pytest

    from dagmca.errors import StoreError
    from dagmca.store.lease import held

    lease_env(monkeypatch, ttl_s=0.3)
    db = tmp_path / "g.db"
    with SQLiteStore(db) as st:
        st.init_schema()
    store = FlakyStore(db, failing=set(range(2, 1000)))
    ran: list[str] = []

    async def work() -> None:
        async with held(store, "s1"):  # type: ignore[arg-type]
            await asyncio.sleep(3)
            ran.append("went on writing")

    try:
        with pytest.raises(StoreError, match="expired"):
            asyncio.run(work())
    finally:
        store.inner.close()
    assert ran == []
