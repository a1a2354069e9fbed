"""Budgets are the session's, not each run's: a budgeted run killed and
resumed — on an endpoint that moved meanwhile — makes the same decisions and the same
graph as one uninterrupted run; a session that spent its budget stays spent unless the
resume raises it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.determinism import relative
from tests.support.fault_server import FaultServer
from tests.support.resume import SETTINGS, kill_after
from tests.support.sessions import PASSAGE

pytestmark = pytest.mark.slow

KEY = "sk-test-budget"
ENV = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""}
# one call at a time: with several in flight, where a budget bites depends on timing
BUDGETED = [*SETTINGS, "--concurrency", "1", "--max-llm-calls", "45", "--quiet"]


def endpoint(server: FaultServer) -> list[str]:
    return ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]


def real_calls(db: Path, session: str) -> int:
    with SQLiteStore(db) as st:
        return sum(1 for c in st.calls(session) if not c.cache_hit)


def test_a_budgeted_run_killed_and_resumed_elsewhere_decides_as_one_run(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    ref_db, db = tmp_path / "ref.db", tmp_path / "killed.db"
    with FaultServer(latency_s=0.02) as first:
        ref = dagmca(
            "run", str(passage), "--store", str(ref_db), "--session", "b-run", *endpoint(first), *BUDGETED,
            cwd=tmp_path, env=ENV,
        )  # fmt: skip
        assert ref.returncode == 0, ref.stderr
        with SQLiteStore(ref_db) as st:
            expected = relative(st, "b-run")
            session = st.get_node("b-run")
            assert session is not None and session.props["status"] == "budget_exhausted"

        argv = ["run", str(passage), "--store", str(db), "--session", "b-run", *endpoint(first), *BUDGETED]
        kill_after(argv, db, 25, cwd=tmp_path, env=ENV)

    # The endpoint moved: the first server is gone, the same model answers on a new port.
    with FaultServer(latency_s=0.02) as moved:
        resumed = dagmca(
            "resume", "b-run", "--store", str(db), *endpoint(moved), "--quiet", cwd=tmp_path, env=ENV
        )
        assert resumed.returncode == 0, resumed.stderr
        with SQLiteStore(db) as st:
            assert check_store(st, "b-run") == []
            assert relative(st, "b-run") == expected, "the resumed budgeted run decided differently"
            session = st.get_node("b-run")
            assert session is not None and session.props["status"] == "budget_exhausted"
        # the budget held across both runs: no more real calls than one run made (but for
        # the resumed run's own pre-flight)
        assert real_calls(db, "b-run") <= real_calls(ref_db, "b-run") + 1

        # Spent stays spent: resuming again asks nothing and says why.
        before = moved.requests
        again = dagmca("resume", "b-run", "--store", str(db), *endpoint(moved), cwd=tmp_path, env=ENV)
        assert again.returncode == 2 and "budget spent" in again.stderr and "Traceback" not in again.stderr
        assert moved.requests == before

        # A raised budget lets it go on, counting what the earlier runs spent.
        raised = dagmca(
            "resume", "b-run", "--store", str(db), *endpoint(moved), "--max-llm-calls", "60",
            cwd=tmp_path, env=ENV,
        )  # fmt: skip
        assert raised.returncode == 0, raised.stderr
        assert "earlier runs" in raised.stdout
        assert moved.requests > before
        assert real_calls(db, "b-run") <= 60 + 3  # three runs' pre-flights


def test_a_cost_budget_without_a_price_is_refused(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    proc = dagmca(
        "run", str(passage), "--llm", "openai", "--model", "my-own-model", "--base-url", "http://127.0.0.1:9",
        "--max-cost-usd", "2", cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "needs a price" in proc.stderr and "--price-per-1k-prompt" in proc.stderr
    assert "Traceback" not in proc.stderr
