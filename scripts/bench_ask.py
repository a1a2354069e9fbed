"""`dagmca ask` at scale: retrieval over a synthetic store of 20,000 nodes once its index
exists, what a second ask embeds, and each cookbook query on the embedded store.

    .venv/bin/python scripts/bench_ask.py [--nodes 20000] [--edges 30000] [--runs 5]
        [--embedder static|minilm|minilm-onnx|minilm-onnx-int8|hashing] [--keep PATH]
        [--profile] [--no-cookbook] [--cli]

The store is one synthetic session (tests/support/synthetic.py) in a fresh SQLite file (with
--keep, that file, made on the first run and reused after, index and all). The first
ask builds the index (timed apart); then `--runs` retrievals of the same question and
of others are timed, as `dagmca ask --retrieve-only --all` runs them: the question
embedded, the index brought up to date (nothing to embed), both rankings, the
expansion and the dissent. Each is timed twice: as a new process asks (nothing of the
store kept in memory: the corpus and the vectors read from the store), and asked
again in the same process, as the MCP server does (what the last ask read is kept
while the graph's version stays). --profile: one more retrieval under cProfile, its
top functions by cumulative time. --cli: `dagmca --help` and `dagmca query` on the
store as whole processes, wall and CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.ask import index as ask_index
from dagmca.ask import retrieve
from dagmca.ask import snapshot as ask_snapshot
from dagmca.similarity import Embedder, HashingEmbedder
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder
from dagmca.store import embedded
from dagmca.store.sqlite import SQLiteStore
from tests.support.cookbook import COOKBOOK
from tests.support.synthetic import synthetic_session

QUESTIONS = [
    "What did the debates conclude about fairness and power?",
    "Is the evidence on market risk settled?",
    "Which questions about trust and memory are still open?",
]
SESSION = "bench"


def filled(path: Path, nodes: int, edges: int) -> SQLiteStore:
    store = SQLiteStore(path)
    store.init_schema()
    if not store.has_session(SESSION):
        records, relationships = synthetic_session(nodes, edges, session=SESSION)
        started = time.perf_counter()
        for i in range(0, len(records), 1000):
            store.write(records[i : i + 1000])
        for i in range(0, len(relationships), 1000):
            store.write((), relationships[i : i + 1000])
        print(f"store: {len(records):,} nodes, {len(relationships):,} edges written in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    return store


def timed_retrieval(
    store: SQLiteStore, embedder: Embedder, question: str, *, cold: bool = True
) -> tuple[float, float, int, int]:
    """Seconds (wall, and CPU of the whole process: on a shared machine the wall time
    also counts other processes' turns), texts embedded into the index, nodes retrieved.
    `cold`: as a new process asks, with nothing the earlier asks read kept in memory."""
    if cold:
        ask_snapshot.PARTS.clear()
        ask_index.BLOCKS.clear()
    started, cpu = time.perf_counter(), time.process_time()
    found = asyncio.run(retrieve(store, question, embedder=embedder, sessions="all"))
    took = time.perf_counter() - started
    return took, time.process_time() - cpu, found.index.embedded, len(found.retrieved)


def command_line(path: Path, runs: int) -> None:
    """`dagmca --help` and `dagmca query` on the store, each started `runs` times as a
    whole process: median wall and CPU time (user and system, of the child)."""
    program = str(Path(sys.executable).with_name("dagmca"))
    commands = {
        "dagmca --help": [program, "--help"],
        "dagmca query (count the debates)": [
            program, "query", "MATCH (d:Debate) RETURN count(d) AS c", "--json", "--store", str(path),
        ],
    }  # fmt: skip
    print(f"\nthe command line, each run {runs} times as a process:")
    for name, argv in commands.items():
        walls, cpus = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        print(f"  {name:34} median {statistics.median(walls):.2f} s ({statistics.median(cpus):.2f} s CPU), "
              f"max {max(walls):.2f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--embedder", choices=[*(e.value for e in EmbedderName), "hashing"], default=DEFAULT.value
    )
    parser.add_argument("--keep", type=Path, help="the store file to make once and reuse")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-cookbook", action="store_true", help="retrieval only")
    parser.add_argument("--cli", action="store_true", help="also time `dagmca --help` and `dagmca query`")
    args = parser.parse_args()
    embedder: Embedder = HashingEmbedder() if args.embedder == "hashing" else make_embedder(args.embedder)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.db"
        store = filled(path, args.nodes, args.edges)
        try:
            took, cpu, new, found = timed_retrieval(store, embedder, QUESTIONS[0])
            print(f"first ask ({embedder.name}): {took:.2f} s ({cpu:.2f} s CPU), {new:,} texts embedded, "
                  f"{found} nodes retrieved")  # fmt: skip
            for cold, how in ((True, "as a new process asks"), (False, "asked again in one process")):
                times, cpus, embedded_again = [], [], 0
                for _ in range(args.runs):
                    for question in QUESTIONS:
                        took, cpu, new, _ = timed_retrieval(store, embedder, question, cold=cold)
                        times.append(took)
                        cpus.append(cpu)
                        embedded_again += new
                print(f"retrieval once indexed, {how}: median {statistics.median(times):.3f} s "
                      f"({statistics.median(cpus):.3f} s CPU), max {max(times):.3f} s "
                      f"over {len(times)} asks; texts embedded by them: {embedded_again}")  # fmt: skip
            if args.cli:
                command_line(path, args.runs)
            if args.profile:
                profiler = cProfile.Profile()
                profiler.enable()
                timed_retrieval(store, embedder, QUESTIONS[1])
                profiler.disable()
                report = io.StringIO()
                pstats.Stats(profiler, stream=report).sort_stats("cumulative").print_stats(30)
                print(report.getvalue())
            if args.no_cookbook:
                return
            # as `dagmca query` answers one: the store loaded, then the query run
            print(f"\ncookbook on the embedded store, each loaded and answered (median of {args.runs}):")
            for q in COOKBOOK:
                walls, cpus = [], []
                for _ in range(args.runs):
                    started, cpu = time.perf_counter(), time.process_time()
                    rows = embedded.query(store, q.text, {"session": SESSION, "search": "fairness"})[1]
                    walls.append(time.perf_counter() - started)
                    cpus.append(time.process_time() - cpu)
                print(f"  {q.name:38} {statistics.median(walls):6.3f} s ({statistics.median(cpus):.3f} s CPU)"
                      f"  {len(rows):>5} rows")  # fmt: skip
        finally:
            store.close()
            embedder.close()


if __name__ == "__main__":
    main()
