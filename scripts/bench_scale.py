"""A large configuration against a local fake endpoint with a fixed latency: what it
costs and how busy it keeps the endpoint (issue "Scale").

    .venv/bin/python scripts/bench_scale.py [--latency 0.2] [--spread 0] [--concurrency 16]
        [--passage tests/data/street_trees.txt] [--repeat 1] [--json] [-- more run options]

The configuration: --cpp 3 --depth 3 --rounds 3 --max-branches 3 --max-depth 2, on a
1,300-word passage. The fake (tests/fault_server.py) answers every request after the
latency, with schema-valid word salad; with --spread S, every call waits up to S more, by
a hash of its messages (calls of different lengths, as a real model's; siblings then
finish apart). Printed (medians over the repeats): calls by
phase and the observers' share, prompt tokens, the projection `dagmca estimate` gave
before the run, wall time against calls x latency / concurrency (the time 16 busy
slots would need), and dagmca's own CPU per call: the run's process, all threads (the
embedding model's included), and its event loop's thread alone (sampled every 0.05 s),
that thread's also split in three: before the first request reached the fake (start-up:
imports, the pre-flight), from the first request to the last (per call: what the calls
cost), and after the last (the reports).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fault_server import FaultServer  # noqa: E402

CONFIG = ["--cpp", "3", "--depth", "3", "--rounds", "3", "--max-branches", "3", "--max-depth", "2"]


TICKS = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int, tid: int | None = None) -> float | None:
    """CPU seconds (user + system) of one thread of a live process (Linux), by default
    its main thread; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/task/{tid or pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def once(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    with FaultServer(latency_s=args.latency, latency_spread_s=args.spread) as server:
        options = ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]
        options += ["--concurrency", str(args.concurrency), *CONFIG, *args.extra]
        env = {"OPENAI_API_KEY": "sk-bench", "PATH": ""}
        dagmca = [sys.executable, "-m", "dagmca"]
        projected = subprocess.run(
            [*dagmca, "estimate", args.passage, *options, "--json"], capture_output=True, text=True, env=env
        )
        projection = json.loads(projected.stdout)
        store = tmp / "graph.db"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        log = tmp / "stderr.txt"
        with log.open("w") as err:
            proc = subprocess.Popen(
                [*dagmca, "run", args.passage, "--store", str(store), "--quiet", *options],
                stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tmp,
            )  # fmt: skip
            loop_cpu = 0.0
            # the loop's CPU when the first request arrived and when the last one did: the
            # time between is what the calls cost; before is start-up, after is the reports
            first: float | None = None
            first_at: float | None = None
            last, seen = 0.0, 0
            while proc.poll() is None:  # the event loop's thread: the process's main thread
                loop_cpu = thread_cpu(proc.pid) or loop_cpu
                if server.requests > seen:
                    first = loop_cpu if first is None else first
                    first_at = time.monotonic() if first_at is None else first_at
                    last, seen = loop_cpu, server.requests
                time.sleep(0.05)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"run failed ({proc.returncode}): {log.read_text()[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    with sqlite3.connect(store) as con:
        records = [json.loads(r[0]) for r in con.execute("SELECT record FROM llm_calls")]
    phases = Counter(r["phase"] for r in records)
    calls = len(records)
    mean_wait = server.waited_s / max(1, server.requests)  # the latency a call was given
    ideal = calls * mean_wait / args.concurrency
    return {
        "calls": calls,
        "observer_share": round(phases["monitor"] / calls, 3),
        "prompt_tokens": sum(r["prompt_tokens"] for r in records),
        "projected_calls": [projection["calls"]["min"], projection["calls"]["max"]],
        "wall_s": round(wall, 1),
        "first_request_s": round((first_at or started) - started, 2),
        # what a call took as dagmca measured it, against the latency the fake waits
        "latency_seen_s": round(statistics.median(r["latency_s"] for r in records), 3),
        "busy_slots_s": round(ideal, 1),
        "wall_over_busy": round(wall / ideal, 2),
        "cpu_ms_per_call": round(1000 * cpu / calls, 1),
        "loop_cpu_ms_per_call": round(1000 * loop_cpu / calls, 1),
        "loop_cpu_ms_per_call_in_span": round(1000 * (last - (first or 0.0)) / calls, 1),
        "loop_cpu_startup_s": round(first or 0.0, 2),
        "loop_cpu_after_s": round(loop_cpu - last, 2),
        "phases": dict(phases.most_common()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--spread", type=float, default=0.0, help="up to this much more latency per call")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--passage", default=str(ROOT / "tests" / "data" / "street_trees.txt"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more run options, after --")
    args = ap.parse_args()
    runs = []
    for r in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(once(args, Path(tmp)))
        print(f"  repeat {r + 1}: {json.dumps(runs[-1])}", file=sys.stderr)
    keys = (
        "calls",
        "observer_share",
        "prompt_tokens",
        "wall_s",
        "first_request_s",
        "latency_seen_s",
        "busy_slots_s",
        "wall_over_busy",
        "cpu_ms_per_call",
        "loop_cpu_ms_per_call",
        "loop_cpu_ms_per_call_in_span",
        "loop_cpu_startup_s",
        "loop_cpu_after_s",
    )
    summary = {k: statistics.median(float(x[k]) for x in runs) for k in keys}
    summary |= {
        "projected_calls": runs[0]["projected_calls"],
        "phases": runs[0]["phases"],
        "repeats": args.repeat,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    latency = f"{args.latency}s" + (f" (+0-{args.spread}s)" if args.spread else "")
    print(f"latency {latency}, concurrency {args.concurrency}, {' '.join(CONFIG + args.extra)}")
    print(
        f"  {summary['calls']:.0f} calls (projected {summary['projected_calls'][0]:,}-"
        f"{summary['projected_calls'][1]:,}), observers {summary['observer_share']:.0%} of them, "
        f"{summary['prompt_tokens']:,.0f} prompt tokens"
    )
    print(
        f"  wall {summary['wall_s']:.1f}s vs {summary['busy_slots_s']:.1f}s of busy slots "
        f"({summary['wall_over_busy']:.2f}x); dagmca's CPU {summary['cpu_ms_per_call']:.1f} ms per call, "
        f"{summary['loop_cpu_ms_per_call']:.1f} ms of it on the event loop's thread"
    )
    print(
        f"  a call took {summary['latency_seen_s']:.3f}s (median, as dagmca measured it); "
        f"the first request went out {summary['first_request_s']:.1f}s after the process started"
    )
    print(
        f"  the event loop's thread: {summary['loop_cpu_startup_s']:.1f}s of CPU before the first "
        f"request, {summary['loop_cpu_ms_per_call_in_span']:.1f} ms per call from the first request "
        f"to the last, {summary['loop_cpu_after_s']:.1f}s after the last"
    )
    print(f"  calls by phase: {summary['phases']}")


if __name__ == "__main__":
    main()
