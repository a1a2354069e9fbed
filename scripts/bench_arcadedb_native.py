"""ArcadeDB's native build (`arcadedb` on PyPI: the engine as a GraalVM native image, no
JVM) against the embedded store's own engine: which cookbook and construct queries give
the same rows, how long the import, the database, the load and the answers take, on the
rich test session and on a synthetic store of 20,000 nodes.

The native build is a pre-release dagmca does not depend on, so it runs in a virtualenv
of its own, in a child process this script starts:

    python3 -m venv /tmp/arcvenv
    pip download --pre --no-deps arcadedb -d /tmp/arc
    /tmp/arcvenv/bin/pip install --no-deps /tmp/arc/arcadedb-*.whl
    .venv/bin/python scripts/bench_arcadedb_native.py --python /tmp/arcvenv/bin/python

The graph goes into ArcadeDB through the Cypher dagmca's Neo4j store writes (one CREATE
per kind of node and per type of relationship, batched with UNWIND), after a unique
index on `id`, as a copy kept beside the SQLite file would be built.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.graph import EdgeRecord, NodeRecord
from dagmca.store import embedded
from dagmca.store import statements as neo4j_statements
from dagmca.store.networkx_view import store_records
from dagmca.store.rows import edge_row, node_row
from dagmca.store.sqlite import SQLiteStore
from tests.support.cookbook import COOKBOOK, NOT_ON_THE_TEST_SERVER
from tests.support.cypher_constructs import CONSTRUCTS
from tests.support.cypher_rows import comparable, rounded
from tests.support.cypher_sessions import RICH, rich_session
from tests.support.synthetic import synthetic_session

# Run in the native build's virtualenv: load the statements, answer the queries, and
# write the rows and the times as JSON.
CHILD = """
import json, os, sys, tempfile, time
work = sys.argv[1]
began = time.perf_counter()
import arcadedb
out = {"import_s": time.perf_counter() - began, "version": arcadedb.__version__, "rows": {}, "scale": {}}

def load(name, statements):
    began = time.perf_counter()
    db = arcadedb.create_database(os.path.join(tempfile.mkdtemp(), name))
    out[name + "_create_s"] = time.perf_counter() - began
    began = time.perf_counter()
    db.command("sql", "CREATE VERTEX TYPE Node IF NOT EXISTS")
    db.command("sql", "CREATE PROPERTY Node.id IF NOT EXISTS STRING")
    db.command("sql", "CREATE INDEX IF NOT EXISTS ON Node (id) UNIQUE")
    for text, rows in statements:
        with db.transaction():
            db.command("opencypher", text, {"rows": rows})
    out[name + "_load_s"] = time.perf_counter() - began
    return db

def rows(db, text, params):
    return [r.to_dict() for r in db.query("opencypher", text, params)]

spec = json.load(open(os.path.join(work, "spec.json")))
db = load("rich", spec["rich"])
began = time.perf_counter()
for name, text in spec["queries"].items():
    try:
        out["rows"][name] = rows(db, text, {"session": spec["session"]})
    except Exception as exc:
        out["rows"][name] = "error: " + str(exc)[:300]
out["rich_answer_s"] = time.perf_counter() - began
db.close()
db = load("scale", spec["scale"])
for name in spec["scale_queries"]:
    began = time.perf_counter()
    rows(db, spec["queries"][name], {"session": "synthetic"})
    out["scale"][name] = time.perf_counter() - began
db.close()
json.dump(out, open(os.path.join(work, "native.json"), "w"), default=str)
"""


def _plain(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else v


def statements(nodes: list[NodeRecord], edges: list[EdgeRecord]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The Neo4j store's CREATE statements with their rows; timestamps as text, made
    temporal again by the statement."""
    by_kind: dict[tuple[Any, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
    temporal: dict[tuple[Any, tuple[str, ...]], set[str]] = defaultdict(set)
    for i, n in enumerate(nodes):
        row = node_row(n, i)
        temporal[(n.kind, tuple(n.labels))] |= {k for k, v in row["props"].items() if hasattr(v, "isoformat")}
        row["props"] = {k: _plain(v) for k, v in row["props"].items()}
        by_kind[(n.kind, tuple(n.labels))].append(row)
    out = []
    for (kind, labels), rows in by_kind.items():
        extra = [x for x in labels if x not in (kind.value, "Node")]
        times = "".join(f", n.{k} = datetime(row.props.{k})" for k in sorted(temporal[(kind, labels)]))
        out.append((neo4j_statements.create_nodes(kind, extra) + times, rows))
    by_type: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for i, e in enumerate(edges):
        row = edge_row(e, i)
        row["props"] = {k: _plain(v) for k, v in row["props"].items()}
        by_type[e.type].append(row)
    out += [(neo4j_statements.create_edges(t), rows) for t, rows in by_type.items()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the Python of a virtualenv with `arcadedb`")
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=30_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    queries = {f"cookbook:{q.name}": q.text for q in COOKBOOK if q.name not in NOT_ON_THE_TEST_SERVER}
    queries.update(CONSTRUCTS)
    scale_queries = list(queries)[:3]

    rich = SQLiteStore(work / "rich.db")
    rich.init_schema()
    rich_session(rich, work / "out")
    big = SQLiteStore(work / "big.db")
    big.init_schema()
    big_nodes, big_edges = synthetic_session(args.nodes, args.edges)
    big.write(big_nodes, big_edges)
    spec = {
        "rich": statements(*store_records(rich)),
        "scale": statements(big_nodes, big_edges),
        "queries": queries,
        "scale_queries": scale_queries,
        "session": RICH,
    }
    (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")

    began = time.perf_counter()
    mine = {name: embedded.query(rich, text, {"session": RICH})[1] for name, text in queries.items()}
    mine_s = time.perf_counter() - began
    scale_s = {}
    for name in scale_queries:
        began = time.perf_counter()
        embedded.query(big, queries[name], {"session": "synthetic"})
        scale_s[name] = time.perf_counter() - began

    subprocess.run([args.python, "-c", CHILD, str(work)], check=True)
    native = json.loads((work / "native.json").read_text(encoding="utf-8"))
    same = []
    for name, text in queries.items():
        theirs = native["rows"][name]
        # the cookbook is compared as the tests compare it: as sets of rows (its ORDER BYs leave ties)
        ordered = "ORDER BY" in text and not name.startswith("cookbook:")
        if not isinstance(theirs, str) and comparable(
            text, rounded(mine[name]), ordered=ordered
        ) == comparable(text, rounded(theirs), ordered=ordered):
            same.append(name)
        else:
            print(f"differs: {name}: {str(theirs)[:160]}")
    version, imported, created = native["version"], native["import_s"], native["rich_create_s"]
    print(f"arcadedb {version}: import {imported:.3f} s, create {created:.3f} s")
    print(f"same rows as the embedded engine: {len(same)} of {len(queries)}")
    print(f"rich session: load {native['rich_load_s']:.2f} s, answer all {native['rich_answer_s']:.2f} s")
    print(f"embedded engine, rich session: load and answer all {mine_s:.2f} s")
    print(f"{args.nodes} nodes: arcadedb load {native['scale_load_s']:.1f} s")
    for name in scale_queries:
        theirs_s = native["scale"][name]
        print(f"  {name}: arcadedb {theirs_s:.3f} s, embedded (load included) {scale_s[name]:.3f} s")
    rich.close()
    big.close()


if __name__ == "__main__":
    main()
