"""`dagmca build` against an endpoint's rate limit: how much of the limit it uses, and
its wall time against running the same passages one after another.

A local OpenAI-compatible fake (tests/support/fault_server.py) answers every chat request after
a fixed latency and refuses, with a 429 and Retry-After, any request beyond its
requests-per-minute limit over the last 60 seconds, as a real endpoint does. The same
N passages are built twice, each into a fresh store against a fresh server, alternating
which goes first: with --parallel-sessions P, and with --parallel-sessions 1 (one
passage after another). Both arms are told the limit (--rpm).

    .venv/bin/python scripts/bench_build.py [--passages 20] [--rpm 1200] [--latency 0.5]
        [--parallel 8] [--concurrency 16] [--repeat 1] [--trace] [--no-sequential] [--json]

Printed per arm (medians over the repeats): requests, wall seconds, the share of the
limit used while it ran (requests / (rpm x minutes from its first request to its last)),
the most requests any 60 s held, and the 429s the server had to send; then the median
paired ratio of wall times (parallel / one after another).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fault_server import FaultServer, most_in_window  # noqa: E402

CONFIG = ["--cpp", "2", "--depth", "1", "--rounds", "2", "--observers", "skeptical,dialectical"]
CONFIG += ["--max-branches", "1", "--max-depth", "1"]
TEXTS = [ROOT / "examples" / "free_will.txt", ROOT / "examples" / "congestion_pricing.txt"]


def passages(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True)
    bases = [t.read_text(encoding="utf-8") for t in TEXTS]
    for i in range(n):
        text = f"{bases[i % len(bases)]}\n\nCase {i}: the argument above, applied to place number {i}."
        (folder / f"passage_{i:02d}.txt").write_text(text, encoding="utf-8")
    return folder


def arm(folder: Path, store: Path, *, parallel: int, args: argparse.Namespace) -> dict[str, Any]:
    with FaultServer(latency_s=args.latency, rpm_limit=args.rpm, retry_after="2") as server:
        argv = [sys.executable, "-m", "dagmca", "build", str(folder), "--store", str(store)]
        argv += ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]
        argv += ["--rpm", str(args.rpm), "--concurrency", str(args.concurrency)]
        argv += ["--parallel-sessions", str(parallel), "--quiet", "--json", *CONFIG, *args.extra]
        started = time.monotonic()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the dagmca the script sits in (a paired run against another copy of the code)
        env = {"OPENAI_API_KEY": "sk-bench", "PATH": "", "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(argv, cwd=store.parent, capture_output=True, text=True, env=env)
        wall = time.monotonic() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"build failed ({proc.returncode}): {proc.stderr[-2000:]}")
        report = json.loads(proc.stdout)
        times = list(server.arrivals)
    if args.trace:
        per5 = [sum(1 for t in times if b <= t - times[0] < b + 5) for b in range(0, int(wall) + 5, 5)]
        print("  requests per 5 s:", per5, file=sys.stderr)
    span = max(times) - min(times)
    return {
        "parallel_sessions": parallel,
        "requests": len(times),
        "wall_s": round(wall, 2),
        "limit_used": round(len(times) / (args.rpm * span / 60), 3),
        "most_in_60s": most_in_window(times, 60.0),
        "rate_limited": server.over_limit,
        "cpu_s": round(cpu, 1),  # the build process's CPU time, all threads
        # the largest child this script has waited for so far: with --no-sequential and
        # one repeat, the build's own peak
        "peak_rss_mb": round(cpu_after.ru_maxrss / 1024, 1),
        "sessions_done": sum(p["status"] == "done" for p in report["passages"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passages", type=int, default=20)
    ap.add_argument("--rpm", type=int, default=1200)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--trace", action="store_true", help="print requests per 5 s")
    ap.add_argument("--no-sequential", action="store_true", help="the parallel arm only (no ratio)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more build options, after --")
    args = ap.parse_args()
    runs: dict[int, list[dict[str, Any]]] = {args.parallel: [], 1: []}
    ratios = []
    for r in range(args.repeat):
        order = [args.parallel, 1] if r % 2 == 0 else [1, args.parallel]
        if args.no_sequential:
            order = [args.parallel]
        walls = {}
        for p in order:
            with tempfile.TemporaryDirectory() as tmp:
                folder = passages(Path(tmp) / "corpus", args.passages)
                result = arm(folder, Path(tmp) / "graph.db", parallel=p, args=args)
            runs[p].append(result)
            walls[p] = result["wall_s"]
            print(f"  repeat {r + 1}: {json.dumps(result)}", file=sys.stderr)
        if 1 in walls:
            ratios.append(walls[args.parallel] / walls[1])
    arms = [
        {**{k: statistics.median(float(x[k]) for x in results) for k in results[0]}, "parallel_sessions": p}
        for p, results in runs.items()
        if results
    ]
    summary = {
        "passages": args.passages,
        "rpm": args.rpm,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "arms": arms,
        "wall_ratio_parallel_over_sequential": round(statistics.median(ratios), 3) if ratios else None,
        "repeats": args.repeat,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"{args.passages} passages, --rpm {args.rpm}, latency {args.latency}s, concurrency {args.concurrency}"
    )
    for a in arms:
        print(
            f"  --parallel-sessions {a['parallel_sessions']}: {a['requests']:.0f} requests "
            f"in {a['wall_s']:.1f}s, {a['limit_used']:.0%} of the limit used, at most "
            f"{a['most_in_60s']:.0f} in any 60 s, {a['rate_limited']:.0f} refused with 429, "
            f"{a['sessions_done']:.0f} sessions done"
        )
    if ratios:
        print(f"  wall time, parallel / one after another: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
