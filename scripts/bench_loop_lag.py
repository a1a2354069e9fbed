"""Event-loop lag during a session: the longest time a callback waited past when it was
due, while a whole default session runs against the Bolt test server (ArcadeDB, from
the dev dependencies, in a process of its own as a real Neo4j would be) and against
the embedded SQLite store.

    .venv/bin/python scripts/bench_loop_lag.py [--runs 3] [--delay 0.05] [--json]

The session is the default shape on the scripted fake LLM, every call taking --delay
seconds (an endpoint's latency), with the real embedding model, wired as `dagmca run`
wires it (Workspace.open_session, the embedder warmed up as the workspace opens). A probe task
sleeps 5 ms at a time and records how late it wakes: with nothing blocking the loop
that is well under a millisecond; a store write or a model load on the loop shows up
as its full duration.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import MiniLMEmbedder
from dagmca.store.base import GraphStore
from dagmca.store.neo4j import connect
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace import BaseWorkspace
from dagmca.workspace.session import run_and_report
from tests.support.bolt_server import BoltServer
from tests.support.sessions import PASSAGE

PROBE_S = 0.005


async def probe(stop: asyncio.Event, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        due = loop.time() + PROBE_S
        await asyncio.sleep(PROBE_S)
        lags.append(loop.time() - due)


def one_session(store: GraphStore, session: str, out: Path, delay: float) -> dict[str, float]:
    cfg = SessionConfig(llm="fake", concurrency=4)
    lags: list[float] = []

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(probe(stop, lags))
        embedder = MiniLMEmbedder()
        client = ScriptedLLM(delay=delay)
        async with BaseWorkspace(store, embedder=embedder) as ws:
            opened = ws.open_session(cfg, session_id=session, passage=PASSAGE, client=client)
            async with opened as s:
                await run_and_report(s.state, title="lag", model="scripted", out_dir=out / session)
        stop.set()
        await task
        embedder.close()

    started = time.monotonic()
    asyncio.run(go())
    lags.sort()
    return {
        "wall_s": round(time.monotonic() - started, 2),
        "max_lag_ms": round(lags[-1] * 1000, 1),
        "p99_lag_ms": round(lags[int(len(lags) * 0.99)] * 1000, 1),
        "median_lag_ms": round(statistics.median(lags) * 1000, 2),
        "calls": len(store.calls(session)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per LLM call")
    parser.add_argument("--json", action="store_true", help="print every run as JSON")
    args = parser.parse_args()
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp, BoltServer.in_child_process(args.runs) as targets:
        root = Path(tmp)
        for i, target in enumerate(targets):  # alternating, so drift in the machine's speed hits both
            bolt = connect(target)
            bolt.init_schema()
            results.append({"store": "bolt", **one_session(bolt, f"lag{i}", root, args.delay)})
            bolt.close()
            sqlite = SQLiteStore(root / f"lag{i}.db")
            sqlite.init_schema()
            results.append({"store": "sqlite", **one_session(sqlite, f"lag{i}", root, args.delay)})
            sqlite.close()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    head = ("store", "runs", "max lag ms (median, worst)", "p99 lag ms", "wall s", "calls")
    print(f"{head[0]:8} {head[1]:>4} {head[2]:>28} {head[3]:>11} {head[4]:>7} {head[5]:>6}")
    for name in ("bolt", "sqlite"):
        rows = [r for r in results if r["store"] == name]
        maxes = [float(str(r["max_lag_ms"])) for r in rows]
        p99 = statistics.median(float(str(r["p99_lag_ms"])) for r in rows)
        wall = statistics.median(float(str(r["wall_s"])) for r in rows)
        calls = rows[0]["calls"]
        print(
            f"{name:8} {len(rows):>4} {statistics.median(maxes):>20.1f}, {max(maxes):>6.1f} "
            f"{p99:>11.1f} {wall:>7.2f} {calls:>6}"
        )


if __name__ == "__main__":
    main()
