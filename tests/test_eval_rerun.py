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
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION
from dagmca.graph import EvaluationNode, node_from_record
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
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


def test_a_finished_eval_with_the_ledger_and_its_control_run_again_makes_no_request(tmp_path: Path) -> None:
    with FaultServer() as server:
        cfg = SessionConfig.model_validate(
            {"llm": "openai", "model": "fault-model", "base_url": server.base_url, "cpp": 2, "depth": 2,
             "rounds": 1}
        )  # fmt: skip
        first = evaluate(tmp_path / "e.db", cfg, "mca:ledger=final,single")
        traced = first.arms[0]
        assert traced.ledger is not None and traced.control is not None and first.controls
        assert first.spend is not None and first.spend.control.calls > 0
        asked, listed = server.requests, server.gets
        again = evaluate(tmp_path / "e.db", cfg, "mca:ledger=final,single")
        assert (server.requests, server.gets) == (asked, listed)  # the control read back, not traced again
    assert again.model_dump(exclude={"results"}) == first.model_dump(exclude={"results"})


def test_an_eval_stored_under_the_judge_prompts_old_name_is_read_back(tmp_path: Path) -> None:
    """Earlier versions stored the judge's prompt version on the Evaluation node as
    `prompt_version`: such an eval is still read (run again, it asks nothing), and its
    node is written back under today's name, `judge_prompt_version`."""
    db = tmp_path / "e.db"
    with FaultServer() as server:
        cfg = SessionConfig.model_validate(
            {"llm": "openai", "model": "fault-model", "base_url": server.base_url, "rounds": 1}
        )
        first = evaluate(db, cfg, "mca,single")
        with SQLiteStore(db) as st:
            node = st.get_node("ev/evaluation")
            assert node is not None and node.props["judge_prompt_version"] == JUDGE_PROMPT_VERSION
            props = dict(node.props)
            props["prompt_version"] = props.pop("judge_prompt_version")
            st.write([node.model_copy(update={"props": props})])
            old = st.get_node("ev/evaluation")
            assert old is not None and "judge_prompt_version" not in old.props
            read = node_from_record(old)
            assert isinstance(read, EvaluationNode) and read.judge_prompt_version == JUDGE_PROMPT_VERSION
        asked = server.requests
        again = evaluate(db, cfg, "mca,single")
        assert server.requests == asked
    assert again.model_dump(exclude={"results"}) == first.model_dump(exclude={"results"})
    with SQLiteStore(db) as st:
        node = st.get_node("ev/evaluation")
        assert node is not None and "prompt_version" not in node.props
        assert node.props["judge_prompt_version"] == JUDGE_PROMPT_VERSION
