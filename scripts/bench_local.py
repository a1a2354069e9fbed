"""The local model inside a session against the bare server, on the same prompts.

    .venv/bin/python scripts/bench_local.py [PASSAGE] [--repeats 3] [--json]

Runs a main debate on the embedded local model shaped like strange-mca's usual
configuration (cpp 3, depth 2, 3 rounds, a strange loop, no branches, no observers,
512-token turns), recording every request as the session sends it. Then replays the
same requests, bodies unchanged, against a fresh embedded server with nothing else
running, one at a time. Prints completion tokens per second of wall time for both
(prompt processing included in both) and the ratio in-session / bare, over
`--repeats` paired runs (median and each pair); and, from llama.cpp's own timings of
the bare replay, how many prompt tokens it processed and generated, and how fast: the
machine's speed on these prompts, which bounds what any session can do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai import AsyncOpenAI
from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.llm.base import Completion, LLMClient, Message, Request
from dagmca.llm.factory import open_backend
from dagmca.llm.local import LocalModelServer
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.structured import response_format
from dagmca.similarity import MiniLMEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace import BaseWorkspace
from dagmca.workspace.session import run_and_report

REFERENCE = {
    "cpp": 3,
    "depth": 2,
    "rounds": 3,
    "strange_loops": 1,
    "max_branches": 0,
    "monitor_every": "off",
    "max_turn_tokens": 512,
    "cache": False,
}


class Recording(LLMClient):
    """The session's client, passing every call through and keeping its request (the
    body the backend sends) and what it cost in time and tokens."""

    def __init__(self, inner: OpenAIBackend) -> None:
        self.inner = inner
        self.model = inner.model
        self.structured_mode = inner.structured_mode
        self.reported_context_window = inner.reported_context_window
        self.sampling = inner.sampling
        self.requests: list[dict[str, Any]] = []
        self.spans: list[tuple[float, float]] = []
        self.completion_tokens = 0

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self.inner.wire(messages, schema)

    async def count_tokens(self, text: str) -> int | None:
        return await self.inner.count_tokens(text)

    async def complete(self, request: Request) -> Completion:
        schema = request.schema
        body = self.inner._kwargs(request.max_tokens, request.temperature, request.seed)
        wire, _ = self.inner.wire(request.messages, schema)
        if schema is not None:
            fmt = response_format(schema, self.inner.mode, self.inner.decision_first)
            if fmt is not None:
                body["response_format"] = fmt
        start = time.perf_counter()
        done = await self.inner.complete(request)
        self.spans.append((start, time.perf_counter()))
        self.requests.append({"messages": wire, **body})
        self.completion_tokens += done.usage.completion_tokens
        return done

    async def aclose(self) -> None:
        await self.inner.aclose()


def in_session(passage: str, folder: Path) -> tuple[list[dict[str, Any]], int, float]:
    """The requests of one reference session, its completion tokens and its LLM wall time
    (first request sent to last reply received)."""
    cfg = SessionConfig(**REFERENCE)
    backend = open_backend(cfg)
    assert isinstance(backend.client, OpenAIBackend)
    client = Recording(backend.client)
    store = SQLiteStore(str(folder / "bench.db"))
    store.init_schema()
    embedder = MiniLMEmbedder()

    async def go() -> None:
        async with BaseWorkspace(store, embedder=embedder) as ws:
            opened = ws.open_session(cfg, session_id="bench", passage=passage, client=client)
            async with opened as session:
                await run_and_report(session.state, title="bench", model=client.model, out_dir=folder / "out")

    try:
        asyncio.run(go())
    finally:
        backend.stop()
        embedder.close()
        store.close()
    wall = max(e for _, e in client.spans) - min(s for s, _ in client.spans)
    return client.requests, client.completion_tokens, wall


def bare(requests: list[dict[str, Any]], parallel: int) -> tuple[int, float, dict[str, float]]:
    """The same request bodies against a fresh server, one at a time: completion tokens,
    seconds, and llama.cpp's own timings of them (prompt tokens processed, not served
    from its cache, and generated, and the milliseconds each took)."""
    server = LocalModelServer(parallel=parallel).start()
    speed: dict[str, float] = {}

    async def go() -> tuple[int, float, dict[str, float]]:
        client = AsyncOpenAI(base_url=server.base_url, api_key="local", max_retries=0, timeout=600)
        tokens, start = 0, time.perf_counter()
        for body in requests:
            resp = await client.chat.completions.create(**body)
            tokens += resp.usage.completion_tokens if resp.usage else 0
            timings = (resp.model_extra or {}).get("timings") or {}
            for key in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms"):
                speed[key] = speed.get(key, 0.0) + float(timings.get(key) or 0)
        elapsed = time.perf_counter() - start
        await client.close()
        return tokens, elapsed, speed

    try:
        return asyncio.run(go())
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("passage", nargs="?", default=str(root / "examples" / "free_will.txt"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    passage = Path(args.passage).read_text(encoding="utf-8")
    from dagmca.llm.factory import local_slots

    rows = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            requests, s_tokens, s_wall = in_session(passage, Path(tmp))
        b_tokens, b_wall, speed = bare(requests, local_slots(SessionConfig().concurrency))
        row: dict[str, Any] = {
            "calls": len(requests),
            "session_tokens": s_tokens,
            "session_seconds": round(s_wall, 2),
            "session_tps": round(s_tokens / s_wall, 1),
            "bare_tokens": b_tokens,
            "bare_seconds": round(b_wall, 2),
            "bare_tps": round(b_tokens / b_wall, 1),
        }
        row["ratio"] = round(row["session_tps"] / row["bare_tps"], 3)
        # the machine's own speed on these prompts, as llama.cpp timed the bare replay
        parts = (("prompt", "prompt_n", "prompt_ms"), ("generation", "predicted_n", "predicted_ms"))
        for part, n, ms in parts:
            row[f"bare_{part}_tokens"] = int(speed.get(n, 0))
            row[f"bare_{part}_seconds"] = round(speed.get(ms, 0) / 1000, 1)
            row[f"bare_{part}_tps"] = round(speed[n] / speed[ms] * 1000, 1) if speed.get(ms) else None
        rows.append(row)
        if not args.json:
            print(
                f"calls {row['calls']}: in session {row['session_tokens']} tokens in "
                f"{row['session_seconds']} s ({row['session_tps']} tokens/s); bare {row['bare_tokens']} "
                f"in {row['bare_seconds']} s ({row['bare_tps']} tokens/s); ratio {row['ratio']}"
            )
            print(
                f"  bare, as llama.cpp timed it: {row['bare_prompt_tokens']} prompt tokens processed "
                f"in {row['bare_prompt_seconds']} s ({row['bare_prompt_tps']}/s), "
                f"{row['bare_generation_tokens']} generated in {row['bare_generation_seconds']} s "
                f"({row['bare_generation_tps']}/s)"
            )
    median = statistics.median(r["ratio"] for r in rows)
    if args.json:
        print(json.dumps({"runs": rows, "median_ratio": median}, indent=2))
    else:
        print(f"median ratio in-session / bare over {len(rows)} paired runs: {median:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
