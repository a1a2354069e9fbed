"""Store write throughput: a synthetic session of N nodes and M edges written to the
embedded SQLite store and to a real Bolt server, in bulk batches (as `push` writes)
and in event-sized batches (as a run writes).

    .venv/bin/python scripts/bench_store.py [--nodes 10000] [--edges 10000]

The Bolt server is ArcadeDB from the `arcadedb-embedded` dev dependency, started on
127.0.0.1 for the benchmark; with NEO4J_URI set (and NEO4J_PASSWORD, and
NEO4J_DATABASE pointing at a scratch database) it measures that server instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.models import EdgeRecord, NodeRecord
from dagmca.store.base import GraphStore
from dagmca.store.neo4j import BoltTarget, Neo4jStore, connect
from dagmca.store.sqlite import SQLiteStore
from tests.synthetic import synthetic_session


def write_all(
    store: GraphStore, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], batch: int
) -> float:
    started = time.perf_counter()
    for i in range(0, len(nodes), batch):
        store.write(nodes[i : i + batch])
    for i in range(0, len(edges), batch):
        store.write((), edges[i : i + batch])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=10_000)
    parser.add_argument("--batches", default="1000,10", help="batch sizes to time (items per write)")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="dagmca-bench-"))
    server = None
    backends: list[tuple[str, Callable[[str], GraphStore]]] = []

    def sqlite(tag: str) -> GraphStore:
        return SQLiteStore(tmp / f"{tag}.db")

    backends.append(("sqlite", sqlite))
    if os.environ.get("NEO4J_URI"):
        target = BoltTarget.parse(os.environ["NEO4J_URI"])
        backends.append((f"bolt {target.location}", lambda tag: connect(target)))
    else:
        from tests.bolt_server import BoltServer

        server = BoltServer.start(tmp / "arcadedb")
        backends.append(("bolt (ArcadeDB embedded)", lambda tag: connect(server.new_target())))

    print(f"synthetic session: {args.nodes:,} nodes, {args.edges:,} edges")
    print(f"{'store':32} {'items/write':>11} {'seconds':>8} {'nodes+edges/s':>14}")
    try:
        for name, open_ in backends:
            for batch in batches:
                session = f"bench-{batch}"
                nodes, edges = synthetic_session(args.nodes, args.edges, session=session)
                store = open_(session)
                store.init_schema()
                if isinstance(store, Neo4jStore) and os.environ.get("NEO4J_URI"):
                    store.delete_session(session)
                seconds = write_all(store, nodes, edges, batch)
                assert len(store.nodes(session)) == len(nodes) and len(store.edges(session)) == len(edges)
                store.close()
                rate = (len(nodes) + len(edges)) / seconds
                print(f"{name:32} {batch:>11} {seconds:>8.2f} {rate:>14,.0f}", flush=True)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
