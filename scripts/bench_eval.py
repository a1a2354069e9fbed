"""`dagmca eval` against an endpoint's rate limit: how much of the limit it uses from its
first request to its last, and dagmca's CPU time per call.

A local OpenAI-compatible fake (tests/support/fault_server.py) answers every chat request
after a fixed latency and refuses, with a 429 and Retry-After, any request beyond its
requests-per-minute limit over the last 60 seconds, as a real endpoint does. The tasks
are arithmetic with known answers, generated here with a seed; the fake's replies are
fixed text, so the accuracies mean nothing: what is measured is throughput. The eval is
told the limit (--rpm), as `scripts/bench_build.py` tells `build`.

    .venv/bin/python scripts/bench_eval.py [--tasks 20] [--arms mca,vote,single] [--rpm 1200]
        [--latency 0.5] [--parallel P] [--concurrency 16] [--trace] [--json] [-- more eval options]

Printed: requests, wall seconds, the share of the limit used while it ran
(requests / (rpm x minutes from its first request to its last)), the most requests any
60 s held, the 429s the server had to send, the calls the eval reports, and the eval
process's CPU seconds (user + system, all threads) per call.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fault_server import FaultServer, most_in_window  # noqa: E402

# small debates (a few dozen calls a task for mca and its matched vote), main debate only
CONFIG = ["--cpp", "3", "--depth", "2", "--rounds", "3"]


def write_tasks(path: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        a, b, c, d = (rng.randint(0, 30) for _ in range(4))
        lines.append(
            json.dumps(
                {
                    "id": f"t{i:02d}",
                    "question": f"What is {a}+{b}*{c}-{d}? Answer with the number only.",
                    "answer": str(a + b * c - d),
                    "scoring": "numeric",
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    tasks = write_tasks(tmp / "tasks.jsonl", args.tasks, args.seed)
    with FaultServer(latency_s=args.latency, rpm_limit=args.rpm, retry_after="2") as server:
        argv = [sys.executable, "-m", "dagmca", "eval", str(tasks), "--arms", args.arms]
        argv += ["--store", str(tmp / "graph.db"), "--eval-id", "bench"]
        argv += ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]
        argv += ["--rpm", str(args.rpm), "--concurrency", str(args.concurrency)]
        if args.parallel is not None:
            argv += ["--parallel-sessions", str(args.parallel)]
        argv += ["--json", *CONFIG, *args.extra]
        started = time.monotonic()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = {"OPENAI_API_KEY": "sk-bench", "PATH": ""}
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, env=env)
        wall = time.monotonic() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"eval failed ({proc.returncode}): {proc.stderr[-2000:]}")
        report = json.loads(proc.stdout)
        times = list(server.arrivals)
    if args.trace:
        per5 = [sum(1 for t in times if b <= t - times[0] < b + 5) for b in range(0, int(wall) + 5, 5)]
        print("  requests per 5 s:", per5, file=sys.stderr)
        per1 = [sum(1 for t in times if b <= t - times[0] < b + 1) for b in range(10)]
        print("  requests per 1 s, the first 10 s:", per1, file=sys.stderr)
    span = max(times) - min(times)
    calls = report["spend"]["total"]["calls"]
    return {
        "tasks": args.tasks,
        "arms": args.arms,
        "rpm": args.rpm,
        "latency_s": args.latency,
        "parallel_sessions": args.parallel or "default",
        "concurrency": args.concurrency,
        "requests": len(times),
        "wall_s": round(wall, 2),
        "span_s": round(span, 2),
        "limit_used": round(len(times) / (args.rpm * span / 60), 3),
        "most_in_60s": most_in_window(times, 60.0),
        "rate_limited": server.over_limit,
        "calls": calls,
        "calls_per_arm": {a["arm"]: a["calls"] for a in report["arms"]},
        "sessions": sum(a["sessions"] for a in report["arms"]),
        "cpu_s": round(cpu, 2),  # the eval process's CPU time, all threads, start-up included
        "cpu_ms_per_call": round(1000 * cpu / max(1, calls), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--arms", default="mca,vote,single")
    ap.add_argument("--rpm", type=int, default=1200)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--parallel", type=int, help="--parallel-sessions (default: the eval's own)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trace", action="store_true", help="print requests per 5 s")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more eval options, after --")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args, Path(tmp))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['tasks']} tasks x {args.arms}, --rpm {args.rpm}, latency {args.latency}s, "
        f"--parallel-sessions {result['parallel_sessions']}, --concurrency {args.concurrency}"
    )
    print(
        f"  {result['requests']} requests in {result['wall_s']:.1f}s "
        f"({result['span_s']:.1f}s first to last), {result['limit_used']:.1%} of the limit used, "
        f"at most {result['most_in_60s']} in any 60 s, {result['rate_limited']} refused with 429"
    )
    print(
        f"  {result['calls']} calls reported ({result['calls_per_arm']}), {result['sessions']} sessions; "
        f"CPU {result['cpu_s']:.1f}s, {result['cpu_ms_per_call']:.1f} ms a call"
    )


if __name__ == "__main__":
    main()
