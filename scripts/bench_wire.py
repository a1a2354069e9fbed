"""dagmca's CPU per model call on the scale benchmark, this checkout against another one
(the code before a change), in alternating pairs so that a slow stretch of a shared
machine lands on both sides.

    git worktree add /tmp/dagmca-before COMMIT~1; git worktree add /tmp/dagmca-after COMMIT
    .venv/bin/python scripts/bench_wire.py --before /tmp/dagmca-before [--after /tmp/dagmca-after]
        [--pairs 5] [--control 3] [bench_scale options, e.g. --latency 1 --slots 64] [-- run options]

(--after defaults to this checkout; naming the change's own commit keeps later work out
of the comparison.)

Each run is scripts/bench_scale.py --json (this checkout's script, with --code naming
the dagmca it runs), against its local fake endpoint. Printed per pair: CPU per call of
the whole process (all threads) and of the event loop's thread from the first request to
the last, before and after; then the median of the differences (after - before, in ms a
call) over the pairs. With --control N, N pairs of two runs of the before checkout give
the noise floor a difference must clear."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("cpu_ms_per_call", "loop_cpu_ms_per_call_in_span")


def once(code: Path, bench: list[str], run: list[str]) -> dict[str, Any]:
    script = ROOT / "scripts" / "bench_scale.py"
    command = [sys.executable, str(script), "--json", "--code", str(code), *bench]
    done = subprocess.run([*command, "--", *run], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):+.2f} ({min(values):+.2f} to {max(values):+.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the other checkout (the code before the change)")
    ap.add_argument("--after", default=str(ROOT), help="the checkout with the change (default: this one)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--control", type=int, default=0, help="before/before pairs: the noise floor")
    args, rest = ap.parse_known_args()
    cut = rest.index("--") if "--" in rest else len(rest)
    bench, run = rest[:cut], rest[cut + 1 :]
    before, after = Path(args.before).resolve(), Path(args.after).resolve()
    diffs: dict[str, list[float]] = {m: [] for m in MEASURES}
    for i in range(args.pairs):
        a, b = once(before, bench, run), once(after, bench, run)
        for m in MEASURES:
            diffs[m].append(b[m] - a[m])
        print(
            f"pair {i + 1}: {a['calls']:.0f} / {b['calls']:.0f} calls; "
            f"CPU per call {a['cpu_ms_per_call']:.2f} -> {b['cpu_ms_per_call']:.2f} ms, "
            f"event loop per call {a['loop_cpu_ms_per_call_in_span']:.2f} -> "
            f"{b['loop_cpu_ms_per_call_in_span']:.2f} ms; wall {a['wall_s']:.1f} -> {b['wall_s']:.1f} s",
            flush=True,
        )
    floor: dict[str, list[float]] = {m: [] for m in MEASURES}
    for i in range(args.control):
        a, b = once(before, bench, run), once(before, bench, run)
        for m in MEASURES:
            floor[m].append(b[m] - a[m])
        cpu = f"{a['cpu_ms_per_call']:.2f} / {b['cpu_ms_per_call']:.2f}"
        print(f"control {i + 1}: CPU per call {cpu} ms", flush=True)
    for m in MEASURES:
        line = f"{m}: after - before, median over {args.pairs} pairs {_spread(diffs[m])} ms"
        if floor[m]:
            line += f"; noise floor (before/before, {args.control} pairs) {_spread(floor[m])} ms"
        print(line)


if __name__ == "__main__":
    main()
