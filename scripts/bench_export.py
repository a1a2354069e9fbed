"""Export times for a synthetic session (default 20,000 nodes, 30,000 edges), every
format, from records already in memory (what `dagmca export` does after one read).

    .venv/bin/python scripts/bench_export.py [--nodes 20000] [--edges 30000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.export.formats import WRITERS
from dagmca.synthetic import synthetic_session


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=30_000)
    args = parser.parse_args()
    nodes, edges = synthetic_session(args.nodes, args.edges, session="bench")
    print(f"synthetic session: {len(nodes):,} nodes, {len(edges):,} edges")
    print(f"{'format':10} {'seconds':>8} {'MB':>8}")
    for fmt, write in WRITERS.items():
        started = time.perf_counter()
        text = write("bench", nodes, edges)
        seconds = time.perf_counter() - started
        print(f"{fmt:10} {seconds:>8.2f} {len(text.encode()) / 1e6:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
