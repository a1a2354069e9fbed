"""Crash safety: a run killed with SIGKILL at any point resumes without asking a
finished call again, and ends with the graph an uninterrupted run builds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dagmca.graph import PERSONA_SESSION, NodeKind, PersonaNode, node_from_record
from dagmca.graph.store_nodes import TrackRecord
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.determinism import relative
from tests.support.fault_server import FaultServer
from tests.support.resume import SETTINGS, cached_keys, kill_after, preflight_keys
from tests.support.sessions import PASSAGE

pytestmark = pytest.mark.slow

KEY = "sk-test-resume"


def learn_elsewhere(db: Path) -> None:
    """Another session ends while this one is down: every persona it started from now
    remembers other things. The resumed run must start from the memory it started with."""
    with SQLiteStore(db) as st:
        personas = [node_from_record(n) for n in st.nodes(PERSONA_SESSION, NodeKind.PERSONA)]
        assert personas, "the killed run had created its personas"
        for p in personas:
            assert isinstance(p, PersonaNode)
            p.kept = [f"A contribution of {p.perspective} to another passage entirely."]
            p.record = {"gap": TrackRecord(trials=9, successes=9), "assumption": TrackRecord(trials=9)}
            p.sessions = [*p.sessions, "elsewhere"]
        st.write([p.to_record() for p in personas])


def test_sigkill_at_several_points_then_resume(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""}
    with FaultServer(latency_s=0.03) as server:
        common = [
            "--llm",
            "openai",
            "--model",
            "fault-model",
            "--base-url",
            server.base_url,
            "--quiet",
            # the ledger on: its requests must be the same run to run and after a resume
            "--ledger",
            "final",
            *SETTINGS,
        ]
        ref_db = tmp_path / "ref.db"
        ref = dagmca(
            "run",
            str(passage),
            "--store",
            str(ref_db),
            "--session",
            "ref-run",
            *common,
            cwd=tmp_path,
            env=env,
        )
        assert ref.returncode == 0, ref.stderr
        total = server.requests
        ref_keys = set(server.served) - preflight_keys(server)
        assert total > 60
        with SQLiteStore(ref_db) as st:
            expected = relative(st, "ref-run")

        for point in (3, total // 2, total - 10):
            db = tmp_path / f"killed-{point}.db"
            argv = ["run", str(passage), "--store", str(db), "--session", "k-run", *common]
            kill_after(argv, db, point, cwd=tmp_path, env=env)
            if point == total // 2:
                learn_elsewhere(db)
            finished = cached_keys(db)
            assert len(finished) >= point - 1
            before = Counter(server.served)

            resumed = dagmca("resume", "k-run", "--store", str(db), "--quiet", cwd=tmp_path, env=env)
            assert resumed.returncode == 0, resumed.stderr
            asked_again = set(server.served - before)
            assert not asked_again & finished, f"kill at {point}: a finished call was asked again"
            assert finished | asked_again == ref_keys, "together they asked exactly what one run asks"
            with SQLiteStore(db) as st:
                assert check_store(st, "k-run") == []
                assert relative(st, "k-run") == expected, f"kill at {point}: the graph differs"
                session = st.get_node("k-run")
                assert session is not None and session.props["status"] == "done"
