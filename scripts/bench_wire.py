"""The event loop's CPU per chat call through `OpenAIBackend`, on the SDK's request path
and on the direct one a client dagmca builds takes, against the local fake endpoint
(tests/support/fault_server.py) with no latency, 16 calls in flight, prompts of 1,500
words; timed with `time.thread_time` on the loop's thread (the fake's threads are not
counted). Alternates the two paths `--repeat` times.

    .venv/bin/python scripts/bench_wire.py [--calls 800] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dagmca.llm import wire  # noqa: E402
from dagmca.llm.openai_backend import OpenAIBackend  # noqa: E402
from tests.support.fault_server import FaultServer  # noqa: E402

PROMPT = "word " * 1500


async def per_call_ms(url: str, direct: bool, calls: int, in_flight: int = 16) -> float:
    client = wire.make_client(url, "sk-bench", 30)
    if not direct:  # as a client handed in through the API: the SDK's path
        wire._DIRECT.pop(client, None)
    backend = OpenAIBackend(client, "fault-model")
    slots = asyncio.Semaphore(in_flight)

    async def one(i: int) -> None:
        async with slots:
            await backend.complete([{"role": "user", "content": f"{PROMPT}{i}"}], max_tokens=50)

    await one(-1)  # the connection and the first request's set-up, not timed
    start = time.thread_time()
    await asyncio.gather(*(one(i) for i in range(calls)))
    cpu = time.thread_time() - start
    await client.close()
    return 1000 * cpu / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=800)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    found: dict[str, list[float]] = {"sdk": [], "direct": []}
    with FaultServer(latency_s=0.0) as server:
        for _ in range(args.repeat):
            for name in found:
                found[name].append(asyncio.run(per_call_ms(server.base_url, name == "direct", args.calls)))
    for name, runs in found.items():
        shown = ", ".join(f"{x:.2f}" for x in runs)
        print(f"{name}: {statistics.median(runs):.2f} ms of the loop's CPU per call (runs: {shown})")


if __name__ == "__main__":
    main()
