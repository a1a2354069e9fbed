"""The real local model (SmolLM2 via xllamacpp) end to end. Asserts structure, not wording."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from dagmca.llm.local import LOCAL_MODEL_NAME, LocalModelServer
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.prompts.schemas import TensionFlag
from dagmca.similarity import SentenceTransformerEmbedder, jaccard
from tests.conftest import PASSAGE

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalModelServer]:
    server = LocalModelServer(parallel=2).start()
    yield server
    server.stop()


def test_structured_output_from_the_real_model(local_server: LocalModelServer) -> None:
    async def go() -> TensionFlag:
        b = OpenAIBackend(AsyncOpenAI(base_url=local_server.base_url, api_key="local"), LOCAL_MODEL_NAME)
        await b.ping()
        done = await b.complete(
            [{"role": "user", "content": f"Passage: {PASSAGE}\nFlag one tension as JSON."}],
            schema=TensionFlag,
            max_tokens=120,
            seed=1,
        )
        await b.aclose()
        return done.parsed  # type: ignore[no-any-return]

    flag = asyncio.run(go())
    assert 0.0 <= flag.urgency <= 1.0
    assert flag.category.value in {"gap", "assumption", "contradiction", "open_question", "meta"}


def test_embeddings_are_real_and_offline() -> None:
    e = SentenceTransformerEmbedder()
    near = e.similarity("Road pricing reduces congestion.", "Charging drivers cuts traffic jams.")
    far = e.similarity("Road pricing reduces congestion.", "The sonnet's volta turns on grief.")
    assert near > far + 0.2
    assert jaccard("a b c", "a b d") == pytest.approx(0.5)


def test_run_end_to_end_on_the_local_model(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "dagmca",
            "run",
            str(passage),
            "--session",
            "tiny",
            "-q",
            "--cpp",
            "2",
            "--depth",
            "2",
            "--rounds",
            "1",
            "--max-branches",
            "1",
            "--max-depth",
            "1",
            "--max-turn-tokens",
            "48",
            "--max-revisits",
            "0",
            "--urgency-threshold",
            "0.1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "SmolLM2-135M-Instruct" in run.stdout
    check = subprocess.run(
        [sys.executable, "-m", "dagmca", "check", "tiny"], cwd=tmp_path, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout
    subprocess.run(
        [sys.executable, "-m", "dagmca", "export", "tiny", "-o", "t.json"], cwd=tmp_path, check=True
    )
    data = json.loads((tmp_path / "t.json").read_text())
    kinds = [n["kind"] for n in data["nodes"]]
    assert kinds.count("Session") == 1 and kinds.count("Final") == 1
    assert kinds.count("Round") >= 1
    # cpp=2, depth=2, signals on: 2 respond + 2 lateral + 1 observe + 1 signal, + 1 strange loop
    main_turns = [n for n in data["nodes"] if n["kind"] == "Turn" and n["debate"] == "tiny/main"]
    assert len(main_turns) == 7
    assert all(n["text"].strip() for n in main_turns)
    # the real model's observers flagged tensions: one became a branch, others stubs
    assert any(n["kind"] == "Debate" and n["origin"] == "branch" for n in data["nodes"])
    assert any("Stub" in n["labels"] for n in data["nodes"])
