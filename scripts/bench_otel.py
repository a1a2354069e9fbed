"""What tracing costs: scripts/bench_scale.py untraced (A) and with --otel (B), in
alternating pairs, so a slow stretch of a shared machine lands on both sides.

    .venv/bin/python scripts/bench_otel.py [--pairs 3] [--parts] [--control N] [bench_scale options]
        [-- run options]

The figure the design holds tracing to (at most 1% of wall time at realistic latency):

    .venv/bin/python scripts/bench_otel.py --pairs 5 --control 3 --latency 1 --slots 64

An OTLP/HTTP receiver on 127.0.0.1:4318 (where --otel sends by default: bench_scale
passes its run no OTEL_* variable) takes the spans and counts their bytes without
decoding them, as a collector on another machine would cost the run nothing. Printed:
each pair's wall and CPU time (the run's process, all threads, exporter included) and
the median of the ratios B/A over the pairs. With --parts, the traced runs also account
the CPU of tracing's own code (scripts/otel_parts.py), a steadier figure than the
difference of two runs; with --control N, N pairs of two untraced runs give the noise
floor a ratio must clear."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
received = {"requests": 0, "bytes": 0}


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        size = int(self.headers["Content-Length"])
        self.rfile.read(size)
        received["requests"] += 1
        received["bytes"] += size
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def once(bench: list[str], run: list[str], traced: bool, parts: bool = False) -> dict[str, Any]:
    command = [sys.executable, str(ROOT / "scripts" / "bench_scale.py"), "--json", *bench]
    if traced and parts:
        command += ["--otel-parts", "--", *run]
    else:
        command += ["--", *run, *(["--otel"] if traced else [])]
    before = received["bytes"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    result["exported_bytes"] = received["bytes"] - before
    if (result["exported_bytes"] > 0) != traced:
        raise SystemExit("spans missing from the traced run" if traced else "spans sent by the untraced run")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--parts", action="store_true", help="traced runs account tracing's own CPU")
    ap.add_argument("--control", type=int, default=0, help="untraced/untraced pairs: the noise floor")
    args, rest = ap.parse_known_args()
    cut = rest.index("--") if "--" in rest else len(rest)
    bench, run = rest[:cut], rest[cut + 1 :]
    server = ThreadingHTTPServer(("127.0.0.1", 4318), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    walls, cpus, shares = [], [], []
    try:
        for i in range(args.pairs):
            off, on = once(bench, run, False), once(bench, run, True, args.parts)
            walls.append(on["wall_s"] / off["wall_s"])
            cpus.append(on["cpu_s"] / off["cpu_s"])
            if args.parts:  # tracing's own CPU, over what the rest of the traced run used
                own = sum(on["otel_parts_s"].values())
                shares.append(own / (on["cpu_s"] - own))
                # a collection of the whole heap runs where an allocation trips it: when
                # that is inside a part, the part is charged for the run's heap
                gc = on.get("otel_gc_s", {}).get("in_parts", 0.0)
                parts = {k: round(v, 4) for k, v in on["otel_parts_s"].items()}
                print(f"pair {i + 1}: tracing's own CPU {own:.3f} s, {shares[-1]:.2%} of the rest; "
                      f"{parts}; garbage collection inside them {gc:.3f} s", flush=True)  # fmt: skip
            print(
                f"pair {i + 1}: off {off['wall_s']:.2f} s wall, {off['cpu_s']:.2f} s CPU "
                f"(first request {off['first_request_s']:.2f} s, after the last reply "
                f"{off['after_last_reply_s']:.2f} s) | "
                f"on {on['wall_s']:.2f} s, {on['cpu_s']:.2f} s (first request {on['first_request_s']:.2f} s, "
                f"after the last reply {on['after_last_reply_s']:.2f} s; "
                f"{on['exported_bytes']:,} bytes of spans) | "
                f"{off['calls']:.0f} calls | "
                f"on/off wall {walls[-1]:.3f}, CPU {cpus[-1]:.3f}",
                flush=True,
            )
        floor_walls, floor_cpus = [], []
        for i in range(args.control):  # the same run twice, untraced: how far pairs differ alone
            a, b = once(bench, run, False), once(bench, run, False)
            floor_walls.append(b["wall_s"] / a["wall_s"])
            floor_cpus.append(b["cpu_s"] / a["cpu_s"])
            print(f"control {i + 1}: {a['wall_s']:.2f} / {b['wall_s']:.2f} s wall, "
                  f"{a['cpu_s']:.2f} / {b['cpu_s']:.2f} s CPU", flush=True)  # fmt: skip
    finally:
        server.shutdown()
    if shares:
        print(f"tracing's own CPU over the rest of the run: median {statistics.median(shares):.2%} "
              f"({min(shares):.2%}-{max(shares):.2%})")  # fmt: skip
    if floor_walls:
        print(f"noise floor, untraced/untraced over {args.control} pairs: wall {_spread(floor_walls)}, "
              f"CPU {_spread(floor_cpus)}")  # fmt: skip
    overhead = statistics.median(walls) - 1
    print(f"tracing's wall-time overhead: {overhead:+.2%} (median of the pairs; target at most +1.00%)")
    print(
        f"median on/off over {args.pairs} pairs: wall {statistics.median(walls):.3f} "
        f"({min(walls):.3f}-{max(walls):.3f}), "
        f"CPU {statistics.median(cpus):.3f} ({min(cpus):.3f}-{max(cpus):.3f})"
    )


def _spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


if __name__ == "__main__":
    main()
