"""The LLM stack's own CPU per call: `MeteredLLM` over the scripted fake with an
in-memory response cache, N distinct calls (each a miss, its reply kept), then the same
N again (each a hit), timed with `time.process_time`.

    .venv/bin/python scripts/bench_llm_stack.py [--calls 1500] [--own-keys]

`--own-keys`: every layer makes the request's cache key itself instead of reading the
one the accounting layer made (what the stack did before the key rode on the call's
meta), for a paired comparison in one tree.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dagmca.llm.base import CallMeta, Request  # noqa: E402
from dagmca.llm.fake import ScriptedLLM  # noqa: E402
from dagmca.llm.metered import MeteredLLM  # noqa: E402
from dagmca.llm.stack.base import Wrapper  # noqa: E402
from tests.support.sessions import PASSAGE  # noqa: E402

BODY = (PASSAGE + "\n\n") * 12  # a prompt of a few thousand characters, as a session's are


class MemoryCache:
    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    async def acache_get(self, key: str) -> str | None:
        return self.kept.get(key)

    def cache_get(self, key: str) -> str | None:
        return self.kept.get(key)

    def cache_put(self, key: str, model: str, value: str) -> None:
        self.kept[key] = value


async def per_call(calls: int) -> dict[str, float]:
    llm = MeteredLLM(ScriptedLLM(), concurrency=16, cache=MemoryCache(), record=lambda c: None, session="s")
    meta = CallMeta(agent="a", debate="s/main", phase="respond")
    out: dict[str, float] = {}
    for label in ("miss", "hit"):
        started = time.process_time()
        for i in range(calls):
            messages: list[Any] = [
                {"role": "system", "content": "You take part in a debate."},
                {"role": "user", "content": f"{BODY}\nTurn {i}: answer."},
            ]
            await llm.complete(Request(messages, max_tokens=200, meta=meta))
        out[label] = (time.process_time() - started) / calls * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--own-keys", action="store_true")
    args = parser.parse_args()
    if args.own_keys:
        Wrapper.key_of = lambda self, request: self.key(request)  # type: ignore[method-assign]
    got = asyncio.run(per_call(args.calls))
    label = "own keys" if args.own_keys else "one key"
    print(f"{label}: miss {got['miss']:.1f} us/call, hit {got['hit']:.1f} us/call")


if __name__ == "__main__":
    main()
