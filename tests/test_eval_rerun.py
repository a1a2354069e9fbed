"""A finished eval run again asks nothing of its endpoint: every session is read back,
every verdict and extraction comes from the response cache, and the judge's pre-flight
is not asked (and when a pre-flight is needed, its structured-output probe is answered
from the cache for the same endpoint and model)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dagmca.api import EvalOptions, Workspace
from dagmca.config import SessionConfig
from dagmca.errors import EndpointError
from dagmca.evaluation import EvalReport, Task
from dagmca.similarity import HashingEmbedder
from tests.support.fault_server import FaultServer


def tasks() -> list[Task]:
    scored = [Task(id=f"n{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(2)]
    judged = [
        Task(id=f"o{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(2)
    ]
    return scored + judged


def evaluate(db: Path, cfg: SessionConfig, arms: str = "mca,single,first-vote") -> EvalReport:
    async def main() -> EvalReport:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            return await ws.eval(tasks(), options=EvalOptions(arms=arms, eval_id="ev"), settings=cfg)

    return asyncio.run(main())


def test_a_finished_eval_run_again_makes_no_request(tmp_path: Path) -> None:
    with FaultServer() as server:
        cfg = SessionConfig.model_validate(
            {"llm": "openai", "model": "fault-model", "base_url": server.base_url, "cpp": 2, "depth": 2,
             "rounds": 1}
        )  # fmt: skip
        first = evaluate(tmp_path / "e.db", cfg)
        assert server.requests > 0 and first.judge is not None
        asked, listed = server.requests, server.gets
        again = evaluate(tmp_path / "e.db", cfg)
        assert (server.requests, server.gets) == (asked, listed)  # not one request, the probe included
    assert again.model_dump(exclude={"results"}) == first.model_dump(exclude={"results"})


def test_a_down_judge_endpoint_is_named_by_its_own_option(tmp_path: Path) -> None:
    with FaultServer() as server:
        cfg = SessionConfig.model_validate(
            {"llm": "openai", "model": "fault-model", "base_url": server.base_url,
             "roles": {"judge": {"base_url": "http://127.0.0.1:9/v1", "model": "judge-model"}}}
        )  # fmt: skip
        try:
            evaluate(tmp_path / "e.db", cfg, "single,mca")
        except EndpointError as exc:
            assert exc.problem.startswith("the judge cannot be used")
            assert "--judge-base-url" in exc.fix and "--base-url and" not in exc.fix
        else:
            raise AssertionError("the eval ran with a judge that cannot be reached")
        assert server.requests == 0  # stopped before any session ran
