"""An evaluation's sessions and its judge under one set of limits: one concurrency gate
for every session run at once and the judge's pairs, one backend (and so one rate
limiter) for every arm and repeat, and one budget that the judge's calls count in,
with what they cost in the report's spend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dagmca.api import Workspace
from dagmca.config import SessionConfig
from dagmca.evaluation import EvalReport, Task, parse_arms
from dagmca.evaluation.running import EvalPlan, run_eval
from dagmca.evaluation.sessions import EvalSessions
from dagmca.graph import CallPhase
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_store
from tests.support.evals import EVAL, longer_wins, scripted
from tests.support.fault_server import FaultServer

BASE = SessionConfig.model_validate({"llm": "fake"})


def run(
    tmp_path: Path, client: ScriptedLLM, found: list[Task], arms: str, base: SessionConfig, **kw: object
) -> EvalReport:
    plan = EvalPlan(eval_id=EVAL, tasks=found, arms=parse_arms(arms, base.model_dump()), **kw)  # type: ignore[arg-type]

    async def main() -> EvalReport:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            return await run_eval(ws, plan, base, client=client)

    return asyncio.run(main())


def open_tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(n)]


def pair_calls(client: ScriptedLLM) -> list[ScriptedCall]:
    return [c for c in client.calls if c.meta.phase == CallPhase.PAIR]


def test_sessions_run_at_once_and_the_judge_never_pass_the_eval_concurrency(tmp_path: Path) -> None:
    client = scripted(lambda a, t, r: "x", longer_wins)
    client.delay = 0.01  # calls overlap, so each session alone would fill its own slots
    found = [*open_tasks(3), Task(id="t7", question="What is 7 + 7?", answer="14")]
    cfg = BASE.model_copy(update={"concurrency": 2})
    report = run(tmp_path, client, found, "single,mca:rounds=1,agents=3", cfg, parallel=6)
    assert [a.sessions for a in report.arms] == [4, 4]
    assert pair_calls(client), "the judge ran under the same gate"
    # six sessions at once, each able to send two: held to the eval's two in all
    assert client.max_in_flight == 2


def test_every_arm_and_repeat_shares_one_backend_whatever_its_seed(tmp_path: Path) -> None:
    async def main() -> tuple[object, object, object]:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            runner = EvalSessions(ws, BASE, None)
            first = await runner.backend(BASE.model_copy(update={"seed": 1}))
            second = await runner.backend(BASE.model_copy(update={"seed": 2, "rounds": 1}))
            other = await runner.backend(BASE.model_copy(update={"model": "another"}))
            return first, second, other

    first, second, other = asyncio.run(main())
    assert first is second  # one rate limiter for the repeats and the variants
    assert other is not first  # another model is another backend


def test_the_judges_calls_are_in_the_spend_and_the_totals_add_up(tmp_path: Path) -> None:
    client = scripted(lambda a, t, r: "x", longer_wins)
    report = run(tmp_path, client, open_tasks(3), "single,mca:rounds=1", BASE)
    spend = report.spend
    assert spend is not None
    assert spend.judge.calls == len(pair_calls(client)) == 3 * 2  # three pairs in two orders
    assert spend.judge.tokens > 0
    assert spend.arms.calls == sum(a.calls for a in report.arms)
    assert spend.total.calls == spend.arms.calls + spend.judge.calls == len(client.calls)
    with open_store(str(tmp_path / "e.db")) as st:
        assert len(st.calls(EVAL)) == spend.judge.calls  # the log agrees


def test_the_judges_calls_count_against_the_eval_budget_and_a_raised_one_finishes_the_pairs(
    tmp_path: Path,
) -> None:
    found, arms = open_tasks(3), "single,mca:rounds=1"
    free = run(tmp_path / "free", scripted(lambda a, t, r: "x", longer_wins), found, arms, BASE)
    assert free.spend is not None
    sessions = free.spend.arms.calls
    # one slot at a time, so each call sees what the one before it spent; room for the
    # sessions and one judge call (a call must leave two for the final integration)
    tight = BASE.model_copy(update={"concurrency": 1, "max_llm_calls": sessions + 3})
    client = scripted(lambda a, t, r: "x", longer_wins)
    report = run(tmp_path, client, found, arms, tight)
    assert report.skipped == 0 and report.unjudged == 3
    (row,) = report.comparisons  # the unjudged pairs, counted apart: never ties
    assert len(pair_calls(client)) == 1 and (row.wins, row.losses, row.ties, row.unjudged) == (0, 0, 0, 3)
    assert report.spend is not None and report.spend.total.calls == sessions + 1
    # raised: the pairs are judged, the call already made answered from the cache
    made = len(client.calls)
    again = run(tmp_path, client, found, arms, BASE)
    assert again.unjudged == 0 and len(pair_calls(client)) == 6
    assert len(client.calls) == made + 5, "no session ran again"
    (judged,) = again.comparisons
    assert judged.wins + judged.losses + judged.ties == 3
    assert again.spend is not None and again.spend.judge.calls == 6


def test_an_earlier_runs_spend_counts_against_the_budget_of_a_rerun(tmp_path: Path) -> None:
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(4)]
    client = scripted(lambda a, t, r: "0")
    run(tmp_path, client, found[:2], "single", BASE)
    made = len(client.calls)
    # the two sessions run before spent six calls: a cap of nine leaves room for one more
    capped = BASE.model_copy(update={"max_llm_calls": 9})
    # one session at a time, so the fourth finds the budget spent before it starts
    report = run(tmp_path, client, found, "single", capped, parallel=1)
    assert report.skipped == 1 and report.arms[0].sessions == 3
    assert len(client.calls) == made + 3


def test_sessions_starting_together_on_one_endpoint_count_each_request_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arms share one backend: sessions that start at once negotiate its structured
    mode once between them, and the calls the report counts are the requests the
    endpoint received, so a vote arm is matched to what mca really asked."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(3)]
    with FaultServer(latency_s=0.05) as server:
        cfg = SessionConfig.model_validate(
            {"llm": "openai", "model": "fault-model", "base_url": server.base_url, "cpp": 2, "depth": 1}
        )
        plan = EvalPlan(eval_id=EVAL, tasks=found, arms=parse_arms("mca,vote,single", cfg.model_dump()))

        async def main() -> EvalReport:
            async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
                return await run_eval(ws, plan, cfg)

        report = asyncio.run(main())
        requests = len(server.arrivals)
    calls = {a.arm: a.calls for a in report.arms}
    assert report.spend is not None and report.spend.total.calls == requests == sum(calls.values())
    # the one negotiation is in whichever session pinged first
    assert abs(calls["vote"] - calls["mca"]) <= len(found)
