"""The LLM layer under faults, against a real HTTP server that speaks the OpenAI API
(tests/support/fault_server.py): retries, repair, accounting, the cache, budgets, a down
endpoint, and secrets kept out of everything a run leaves behind."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.debate.session import SessionResult
from dagmca.graph import CallRecord
from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Request
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.openai_call import make_client
from dagmca.llm.retry import RetryPolicy
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.cli import dagmca
from tests.support.determinism import relative
from tests.support.fault_server import CLIENT_KIND, FAULTS, FaultServer
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE

KEY = "sk-test-Secret-4f9a1c77e2b04d8c"
SMALL = {
    "llm": "openai",
    "model": "fault-model",
    "cpp": 2,
    "depth": 2,
    "rounds": 2,
    "max_branches": 2,
    "max_depth": 1,
    "max_revisits": 0,
    "concurrency": 4,
}


def run_against(
    server: FaultServer,
    store: SQLiteStore,
    session: str,
    *,
    timeout: float = 1.0,
    attempts: int = 8,
    **settings: Any,
) -> tuple[SessionResult, MeteredLLM]:
    cfg = SessionConfig(**{**SMALL, **settings})
    client = make_client(server.base_url, KEY, timeout)  # the client a run builds
    policy = RetryPolicy(attempts=attempts, base_s=0.02, max_s=0.2)
    backend = OpenAIBackend(client, cfg.model, policy=policy)

    async def go() -> tuple[SessionResult, MeteredLLM]:
        async with open_state(
            cfg, store, client=backend, session_id=session, passage=PASSAGE, embedder=HashingEmbedder()
        ) as state:
            out = store.path.parent / session
            return await run_and_report(state, title="t", model=cfg.model, out_dir=out), state.handles.llm

    return asyncio.run(go())


@pytest.fixture
def sqlite(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "r.db")
    store.init_schema()
    return store


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.slow
def test_a_session_completes_with_a_fault_kind_at_rate_0_3(fault: str, sqlite: SQLiteStore) -> None:
    rates = {fault: 0.3}
    with FaultServer(rates=rates, seed=7, retry_after="0.05", hang_s=1.5) as server:
        # Faults are drawn in the order requests arrive, which the latencies decide: at
        # 0.3 a call meets 8 in a row with p = 0.3^8 = 7e-5 and gives up (8 faults, 7
        # retries, a failure): in 0.5% of these runs of 82 calls, per fault kind (seen
        # once, as 43 retries for 44 faults). With 12 tries, 4e-5 per run.
        result, llm = run_against(server, sqlite, "f", timeout=0.5, attempts=12)
    m = llm.meter
    assert result.session.status == "done" and result.final is not None
    assert check_store(sqlite, "f") == []
    assert server.injected[fault] >= 5, "the fault was really injected"
    kind = CLIENT_KIND[fault]
    if fault in ("bad_json", "truncate"):
        # Only structured replies can be broken or cut; a cut text turn is accepted.
        assert 0 < m.faults[kind] <= server.injected[fault]
        assert m.repairs > 0
        # One repair try, then a recorded failure the run tolerates (a missing flag).
        assert m.failures == sum(1 for r in sqlite.calls("f") if r.error)
    else:
        assert m.faults[kind] == server.injected[fault]  # every fault seen and counted
        assert m.retries == server.injected[fault]  # each one retried
        assert m.failures == 0
    records = sqlite.calls("f")
    assert sum(r.retries for r in records) == m.retries
    assert sum(len(r.faults) for r in records) == sum(m.faults.values())


@pytest.mark.slow
def test_mixed_faults_through_the_cli_are_counted_in_the_summary(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    rates = dict.fromkeys(FAULTS, 0.3 / len(FAULTS))
    with FaultServer(rates=rates, seed=3, retry_after="0.05", hang_s=1.5) as server:
        proc = dagmca(
            "run", str(passage), "--llm", "openai", "--model", "fault-model", "--base-url", server.base_url,
            "--session", "mixed", "--quiet", "--cpp", "2", "--max-depth", "1", "--max-branches", "2",
            "--request-timeout", "0.5", "--max-retries", "8",
            cwd=tmp_path, env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""},
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = " ".join(proc.stdout.split())
    total_faults = sum(server.injected.values())
    assert total_faults > 10
    assert "status │ done" in summary
    retries = int(summary.split("retries │ ")[1].split()[0])
    assert retries >= sum(server.injected[f] for f in FAULTS if f not in ("bad_json", "truncate"))
    assert "faults seen:" in summary and "rate_limited" in summary
    check = dagmca("check", "mixed", cwd=tmp_path)
    assert check.returncode == 0, check.stdout


@pytest.mark.slow
def test_retry_after_is_honoured(sqlite: SQLiteStore) -> None:
    with FaultServer(rates={"rate_limit": 1.0}, retry_after="0.4") as server:
        client = make_client(server.base_url, KEY, 2)
        backend = OpenAIBackend(client, "fault-model", policy=RetryPolicy(attempts=3, base_s=0.0, max_s=0.0))

        async def ask() -> None:
            try:
                await backend.complete(Request([{"role": "user", "content": "hi"}], max_tokens=5))
            finally:
                await backend.aclose()

        started = time.monotonic()
        with pytest.raises(LLMError) as failed:
            asyncio.run(ask())
        elapsed = time.monotonic() - started
    # backoff is 0 here, so the two waits are the server's Retry-After
    assert 0.8 <= elapsed < 3 and failed.value.retries == 2 and server.requests == 3


@pytest.mark.slow
def test_a_repeated_run_is_answered_from_the_cache_with_the_same_graph(sqlite: SQLiteStore) -> None:
    # agents that start from zero each time: with the store's persistent agents
    # (the default) a second session's agents remember the first, so it asks anew
    # the ledger on: it reads parallel branches in the protocol's order, not the order
    # they happened to finish, so its requests are the same run to run
    fresh = {"agent_memory": "session", "ledger": "final"}
    with FaultServer() as server:
        first, _ = run_against(server, sqlite, "s-one-x9", **fresh)
        asked = server.requests
        second, llm = run_against(server, sqlite, "s-two-x9", **fresh)
        assert server.requests == asked, "no new call"
        assert llm.meter.calls == 0 and llm.meter.cache_hits > 50
        assert relative(sqlite, "s-one-x9") == relative(sqlite, "s-two-x9")
        _, llm = run_against(server, sqlite, "s-three-x9", cache=False, **fresh)
        assert server.requests == 2 * asked and llm.meter.cache_hits == 0  # --no-cache asks again
    assert second.session.llm_calls == 0 and first.session.llm_calls == asked


@pytest.mark.parametrize("kind", ["calls", "tokens", "cost"])
@pytest.mark.slow
def test_each_budget_stops_cleanly_and_keeps_the_final(kind: str, sqlite: SQLiteStore) -> None:
    with FaultServer() as server:
        prices = {"price_per_1k_prompt": 1.0, "price_per_1k_completion": 2.0}
        full, _ = run_against(server, sqlite, "full", cache=False, **prices)
        budget: dict[str, Any] = {
            "calls": {"max_llm_calls": full.session.llm_calls // 3},
            "tokens": {"max_tokens": full.session.tokens // 3},
            "cost": {"max_cost_usd": full.session.cost_usd / 3},
        }[kind]
        capped, _ = run_against(server, sqlite, "capped", cache=False, **budget, **prices)
    s = capped.session
    assert s.status == "budget_exhausted" and capped.final is not None
    assert check_store(sqlite, "capped") == []
    assert sqlite.calls("capped")[-1].phase == "final"  # the final integration ran last
    assert s.llm_calls < full.session.llm_calls
    if kind == "calls":
        assert s.llm_calls <= budget["max_llm_calls"]
    elif kind == "tokens":
        assert s.tokens <= budget["max_tokens"] * 1.6  # a round in flight finishes
    else:
        assert s.cost_usd <= budget["max_cost_usd"] * 1.6


@pytest.mark.slow
def test_an_endpoint_that_is_down_fails_the_run_within_seconds(tmp_path: Path) -> None:
    from tests.support.bolt_server import free_port

    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    started = time.monotonic()
    proc = dagmca(
        "run", str(passage), "--llm", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{free_port()}/v1",
        cwd=tmp_path, env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert time.monotonic() - started < 20
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not usable" in lines[0] and "Traceback" not in proc.stderr
    assert KEY not in proc.stderr


@pytest.mark.slow
def test_an_endpoint_that_dies_mid_run_stops_it_resumably(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    with FaultServer(rates={"server_500": 1.0}) as server:
        proc = dagmca(
            "run", str(passage), "--llm", "openai", "--model", "fault-model", "--base-url", server.base_url,
            "--session", "dies", "--quiet", "--max-retries", "1", cwd=tmp_path, env={"OPENAI_API_KEY": KEY},
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "failed 8 calls in a row" in proc.stderr and "dagmca resume dies" in proc.stderr
    assert KEY not in proc.stderr + proc.stdout
    listed = dagmca("sessions", cwd=tmp_path)
    assert "failed" in listed.stdout


@pytest.mark.slow
def test_secrets_never_reach_logs_reports_store_or_exports(tmp_path: Path, bolt_server: Any) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    target = bolt_server.new_target()
    uri = f"{target.uri}/{target.database}"
    env = {"OPENAI_API_KEY": KEY, **bolt_server.env(target)}
    # Error bodies echo the Authorization header, so failures carry the key.
    with FaultServer(rates={"server_500": 0.3, "rate_limit": 0.1}, retry_after="0.05") as server:
        proc = dagmca(
            "run", str(passage), "--llm", "openai", "--model", "fault-model", "--base-url", server.base_url,
            "--store", uri, "--session", "sec", "--cpp", "2", "--max-depth", "1", "--max-retries", "1",
            "--out", str(tmp_path / "reports"), cwd=tmp_path, env=env,
        )  # fmt: skip
        assert any(KEY in a for a in server.authorizations), "the key was really sent"
    assert proc.returncode == 0, proc.stderr
    exported = dagmca(
        "export", "sec", "--store", uri, "-o", str(tmp_path / "sec.json"), cwd=tmp_path, env=env
    )
    assert exported.returncode == 0, exported.stderr
    from dagmca.store.neo4j import connect

    # the call log and the response cache of a Neo4j store: beside it, in .dagmca/llm.db
    sidecar = tmp_path / ".dagmca" / "llm.db"
    with connect(target, llm_store=sidecar) as st:
        everything = json.dumps(
            [r.data() for r in st.run_query("MATCH (n) RETURN properties(n) AS p", {})], default=str
        )
        calls = st.calls("sec")
        errors = [c.error for c in calls if c.error]
    assert errors, "some calls failed, and their errors were recorded"
    texts = [proc.stdout, proc.stderr, exported.stdout, exported.stderr, everything]
    texts += [json.dumps([c.model_dump() for c in calls]), sidecar.read_bytes().decode(errors="replace")]
    texts += [
        p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".json"
    ]
    for secret in (KEY, bolt_server.password):
        assert not any(secret in t for t in texts)


RATE = "rate_limited"


class CutThenFaulty(LLMClient):
    """A first reply cut at its cap (met 1 retry on the way); the continuation either
    meets 2 retries and answers, or fails after 3."""

    def __init__(self, continuation_fails: bool) -> None:
        self.model = "cut"
        self.continuation_fails = continuation_fails
        self.requests = 0

    async def complete(self, request: Request) -> Completion:
        self.requests += 1
        if self.requests == 1:
            return Completion(
                text="The first half of", finish_reason="length", retries=1, faults=["rate_limited"]
            )
        if self.continuation_fails:
            raise LLMError("gave up", faults=["server_error"] * 3, retries=3)
        return Completion(
            text="the answer, whole.", finish_reason="stop", retries=2, faults=["timeout", "timeout"]
        )


@pytest.mark.parametrize("fails", [False, True])
def test_the_retries_of_a_continuation_are_counted(fails: bool) -> None:
    records: list[CallRecord] = []
    llm = MeteredLLM(CutThenFaulty(fails), concurrency=1, record=records.append, continue_cut=True)
    done = asyncio.run(
        llm.complete(Request([{"role": "user", "content": "q"}], max_tokens=8, meta=CallMeta(agent="a")))
    )
    assert llm.meter.retries == (4 if fails else 3) == records[-1].retries
    assert done.text.endswith("[…]") == fails
    assert llm.meter.faults["rate_limited"] == 1
    assert llm.meter.faults["server_error" if fails else "timeout"] == (3 if fails else 2)
