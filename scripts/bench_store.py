"""Store write throughput against a plain baseline of the same rows, in the same run.

A synthetic session of N nodes and M edges is written by the store (in batches of
1,000 as `push` writes, and of 10 as a run writes event by event) and, into a fresh
session beside it, by the plainest writer of the same rows:

- SQLite: `executemany` INSERTs of the already-serialised rows, one transaction a batch;
- Bolt: `UNWIND $rows AS row CREATE …` per label and per relationship type (edges
  MATCH their two ends by id), one transaction a batch.

Each pair is timed `--repeat` times, alternating which goes first; the ratio printed
is the median of the paired ratios (store / baseline), the seconds are medians.

    .venv/bin/python scripts/bench_store.py [--nodes 10000] [--edges 10000] [--json]

The Bolt server is ArcadeDB from the `arcadedb-embedded` dev dependency, in a process
of its own; with NEO4J_URI set (and NEO4J_PASSWORD, and NEO4J_DATABASE pointing at a
scratch database, which it empties) it measures that server instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.graph import EdgeRecord, NodeRecord
from dagmca.store import statements
from dagmca.store.base import GraphStore
from dagmca.store.neo4j import BoltTarget, Neo4jStore, connect
from dagmca.store.rows import edge_row, node_row
from dagmca.store.sqlite import SQLiteStore, sqlite_edge_row, sqlite_node_row
from tests.support.synthetic import synthetic_session

Rows = tuple[list[NodeRecord], list[EdgeRecord]]


@dataclass
class Result:
    store: str  # sqlite | bolt
    batch: int
    seconds: float  # the store's writes, median
    baseline_seconds: float  # the plain writer's, median
    ratio: float  # median of the paired store / baseline ratios
    elements: int


def store_writes(store: GraphStore, rows: Rows, batch: int) -> float:
    nodes, edges = rows
    started = time.perf_counter()
    for i in range(0, len(nodes), batch):
        store.write(nodes[i : i + batch])
    for i in range(0, len(edges), batch):
        store.write((), edges[i : i + batch])
    return time.perf_counter() - started


def sqlite_baseline(store: SQLiteStore, rows: Rows, batch: int) -> float:
    nodes, edges = rows
    node_rows = [sqlite_node_row(n, seq) for seq, n in enumerate(nodes, 1)]
    edge_rows = [sqlite_edge_row(e, seq) for seq, e in enumerate(edges, 1)]
    conn = store._conn
    started = time.perf_counter()
    for sql, all_rows in (
        (
            "INSERT INTO nodes(id, session, kind, labels, created_at, props, seq) VALUES (?,?,?,?,?,?,?)",
            node_rows,
        ),
        (
            "INSERT INTO edges(source, target, type, key, session, props, seq) VALUES (?,?,?,?,?,?,?)",
            edge_rows,
        ),
    ):
        for i in range(0, len(all_rows), batch):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(sql, all_rows[i : i + batch])
            conn.execute("COMMIT")
    return time.perf_counter() - started


def bolt_baseline(store: Neo4jStore, rows: Rows, batch: int) -> float:
    nodes, edges = rows
    started = time.perf_counter()
    for i in range(0, len(nodes), batch):
        groups: dict[str, list[dict[str, Any]]] = {}
        for seq, n in enumerate(nodes[i : i + batch], i + 1):
            labels = "".join(f":{x}" for x in (statements.NODE_LABEL, n.kind.value, *n.labels))
            groups.setdefault(labels, []).append(node_row(n, seq))
        store.run_batches(
            [(f"UNWIND $rows AS row CREATE (n{labels}) SET n = row.props", r) for labels, r in groups.items()]
        )
    for i in range(0, len(edges), batch):
        by_type: dict[str, list[dict[str, Any]]] = {}
        for seq, e in enumerate(edges[i : i + batch], i + 1):
            by_type.setdefault(e.type.value, []).append(edge_row(e, seq))
        store.run_batches(
            [
                (
                    f"UNWIND $rows AS row MATCH (a:{statements.NODE_LABEL} {{id: row.source}}) "
                    f"MATCH (b:{statements.NODE_LABEL} {{id: row.target}}) "
                    f"CREATE (a)-[r:{t}]->(b) SET r = row.props",
                    r,
                )
                for t, r in by_type.items()
            ]
        )
    return time.perf_counter() - started


@contextlib.contextmanager
def bolt_targets(count: int) -> Iterator[Callable[[], BoltTarget]]:
    if os.environ.get("NEO4J_URI"):
        target = BoltTarget.parse(os.environ["NEO4J_URI"])
        yield lambda: target
        return
    from tests.support.bolt_server import BoltServer

    with BoltServer.in_child_process(count) as targets:
        left = list(targets)
        yield lambda: left.pop(0)


def measure(
    name: str,
    open_pair: Callable[[], tuple[GraphStore, GraphStore]],
    baseline: Callable[[Any, Rows, int], float],
    args: argparse.Namespace,
    batch: int,
) -> Result:
    times: list[float] = []
    bases: list[float] = []
    ratios: list[float] = []
    for rep in range(-1, args.repeat):  # the first pair warms the server up (a JVM's JIT): not counted
        mine = synthetic_session(args.nodes, args.edges, session=f"s{batch}x{rep}")
        plain = synthetic_session(args.nodes, args.edges, session=f"b{batch}x{rep}")
        store, base_store = open_pair()
        try:
            order = [("store", store), ("base", base_store)]
            if rep % 2:
                order.reverse()
            took: dict[str, float] = {}
            for which, target in order:
                if which == "store":
                    took[which] = store_writes(target, mine, batch)
                else:
                    took[which] = baseline(target, plain, batch)
            assert len(store.nodes(f"s{batch}x{rep}")) == args.nodes
            assert len(store.edges(f"s{batch}x{rep}")) == args.edges
        finally:
            store.close()
            if base_store is not store:
                base_store.close()
        if rep < 0:
            continue
        times.append(took["store"])
        bases.append(took["base"])
        ratios.append(took["store"] / took["base"])
    return Result(
        store=name,
        batch=batch,
        seconds=round(statistics.median(times), 4),
        baseline_seconds=round(statistics.median(bases), 4),
        ratio=round(statistics.median(ratios), 3),
        elements=args.nodes + args.edges,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=10_000)
    parser.add_argument("--batches", default="1000,10", help="batch sizes to time (items per write)")
    parser.add_argument("--repeat", type=int, default=3, help="paired runs per store and batch size")
    parser.add_argument("--stores", default="sqlite,bolt")
    parser.add_argument("--json", action="store_true", help="print a JSON list of results")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    stores = args.stores.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="dagmca-bench-"))
    results: list[Result] = []

    def report(r: Result) -> None:
        results.append(r)
        if not args.json:
            print(
                f"{r.store:7} batch {r.batch:>5}: store {r.seconds:7.3f} s, "
                f"plain {r.baseline_seconds:7.3f} s, "
                f"ratio {r.ratio:5.2f}  ({r.elements / r.seconds:,.0f} elements/s)",
                flush=True,
            )

    if not args.json:
        print(
            f"synthetic session: {args.nodes:,} nodes, {args.edges:,} edges; {args.repeat} paired runs each"
        )
    counter = iter(range(1_000_000))

    def sqlite_pair() -> tuple[GraphStore, GraphStore]:
        pair = []
        for _ in range(2):
            s = SQLiteStore(tmp / f"{next(counter)}.db")
            s.init_schema()
            pair.append(s)
        return pair[0], pair[1]

    if "sqlite" in stores:
        for batch in batches:
            report(measure("sqlite", sqlite_pair, sqlite_baseline, args, batch))
    if "bolt" in stores:
        with bolt_targets(2 * (args.repeat + 1) * len(batches)) as next_target:

            def bolt_pair() -> tuple[GraphStore, GraphStore]:
                pair = []
                for _ in range(2):
                    s = connect(next_target())
                    if os.environ.get("NEO4J_URI"):
                        s.delete_all()
                    s.init_schema()
                    pair.append(s)
                return pair[0], pair[1]

            for batch in batches:
                report(measure("bolt", bolt_pair, bolt_baseline, args, batch))
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
