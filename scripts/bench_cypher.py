"""Cypher engines for the embedded store, measured: how many cookbook queries each runs
unchanged with the Bolt server's rows, and how long it takes to load the store and
answer them; then the chosen engine on a synthetic store of 20,000 nodes.

The sessions are the scripted fake's (tests/support/cypher_sessions.py: one rich session and a
built corpus of two passages); the reference is ArcadeDB's Bolt server in a process of
its own, holding the same sessions. An engine that is not installed is skipped:

    .venv/bin/pip install grand-cypher nxcypher cypherast ladybug graphqlite cypherlite
    .venv/bin/python scripts/bench_cypher.py [--runs 5] [--nodes 20000] [--edges 30000] [--arcadedb]
    .venv/bin/python scripts/bench_cypher.py --scale-only   # the synthetic store alone: no server
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.graph import PERSONA_SESSION, EdgeRecord, NodeRecord
from dagmca.store import embedded
from dagmca.store.embedded.values import output
from dagmca.store.neo4j import connect
from dagmca.store.networkx_view import store_records
from dagmca.store.push import push_session
from dagmca.store.query import records_to_rows
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer
from tests.support.cookbook import COOKBOOK, NOT_ON_THE_TEST_SERVER
from tests.support.cypher_rows import comparable
from tests.support.cypher_sessions import STORES
from tests.support.synthetic import synthetic_session

Records = tuple[list[NodeRecord], list[EdgeRecord]]
Loader = Callable[[Records], Any]
Runner = Callable[[Any, str, dict[str, Any]], list[dict[str, Any]]]


def _props(n: NodeRecord) -> dict[str, Any]:
    return {"id": n.id, "session": n.session, "created_at": n.created_at, **n.props}


def _networkx(records: Records) -> Any:
    import networkx as nx

    g = nx.MultiDiGraph()
    for n in records[0]:
        g.add_node(n.id, __labels__={"Node", n.kind.value, *n.labels}, **_props(n))
    for e in records[1]:
        g.add_edge(e.source, e.target, __labels__={e.type.value}, session=e.session, **e.props)
    return g


def _columns(result: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(result)
    return [{k: result[k][i] for k in keys} for i in range(len(result[keys[0]]) if keys else 0)]


def _grand(g: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    from grandcypher import GrandCypher

    return _columns(GrandCypher(g).run(text))  # it takes no parameters


def _nxcypher(g: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    from nxcypher import NXCypher

    return _columns(NXCypher(g).run(text, params))


def _cypherast_load(records: Records) -> Any:
    from cypherast.executor import Graph

    g, made = Graph(), {}
    for n in records[0]:
        made[n.id] = g.create_node(["Node", n.kind.value, *n.labels], **_props(n))
    for e in records[1]:
        g.create_rel(made[e.source], made[e.target], e.type.value, session=e.session, **e.props)
    return g


def _cypherast(g: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    import cypherast
    from cypherast.executor import execute

    return [dict(r) for r in execute(cypherast.parse_one(text, read="neo4j"), graph=g, params=params)]


def _graphqlite_load(records: Records) -> Any:
    from graphqlite import graph

    g = graph(":memory:")  # needs a Python whose sqlite3 loads extensions
    flat = [
        (n.id, {k: json.dumps(v) if isinstance(v, dict) else v for k, v in _props(n).items()})
        for n in records[0]
    ]
    ids = g.insert_nodes_bulk([(i, p, n.kind.value) for (i, p), n in zip(flat, records[0], strict=True)])
    conn = g.connection.sqlite_connection
    for n in records[0]:
        for label in ("Node", *n.labels):
            conn.execute(
                "INSERT OR IGNORE INTO node_labels (node_id, label) VALUES (?, ?)", (ids[n.id], label)
            )
    conn.commit()
    g.insert_edges_bulk(
        [(e.source, e.target, {"session": e.session, **e.props}, e.type.value) for e in records[1]], ids
    )
    return g


def _graphqlite(g: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return list(g.connection.cypher(text, params).to_list())


def _cypherlite_load(records: Records) -> Any:
    import cypherlite

    db = cypherlite.open(str(Path(tempfile.mkdtemp()) / "g.cyl"))
    for n in records[0]:
        props = _props(n)
        sets = ", ".join(f"n.{k} = $p{i}" for i, k in enumerate(props))
        labels = ":".join(("Node", n.kind.value, *n.labels))
        db.execute(
            f"CREATE (n:{labels}) SET {sets}", params={f"p{i}": v for i, v in enumerate(props.values())}
        )
    return db


def _cypherlite(db: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(r) for r in db.execute(text, params=params)]


def _ladybug_type(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return "BOOLEAN"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "INT64"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "DOUBLE"
    if all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in present):
        return "STRING[]"
    return "STRING"


def _ladybug_value(kind: str, v: Any) -> Any:
    if v is None:
        return None
    return (
        float(v) if kind == "DOUBLE" else json.dumps(v) if kind == "STRING" and not isinstance(v, str) else v
    )


def _ladybug_load(records: Records) -> Any:
    """One node table per kind (the engine has one label per node) and one relationship
    table per type, with the properties as typed columns."""
    import ladybug

    conn = ladybug.Connection(ladybug.Database(":memory:"))
    kinds: dict[str, list[NodeRecord]] = {}
    for n in records[0]:
        kinds.setdefault(n.kind.value, []).append(n)
    for kind, nodes in kinds.items():
        keys = sorted({k for n in nodes for k in n.props} - {"id", "session", "created_at"})
        types = {k: _ladybug_type([n.props.get(k) for n in nodes]) for k in keys}
        columns = "".join(f", `{k}` {t}" for k, t in types.items())
        conn.execute(
            f"CREATE NODE TABLE {kind}(id STRING PRIMARY KEY, session STRING, created_at STRING{columns})"
        )
        setters = ", ".join(
            ["id: $id, session: $s, created_at: $c"] + [f"`{k}`: $v{i}" for i, k in enumerate(keys)]
        )
        for n in nodes:
            args = {"id": n.id, "s": n.session, "c": n.created_at}
            args |= {f"v{i}": _ladybug_value(types[k], n.props.get(k)) for i, k in enumerate(keys)}
            conn.execute(f"CREATE (:{kind} {{{setters}}})", args)
    kind_of = {n.id: n.kind.value for n in records[0]}
    by_type: dict[str, list[EdgeRecord]] = {}
    for e in records[1]:
        by_type.setdefault(e.type.value, []).append(e)
    for type_, edges in by_type.items():
        keys = sorted({k for e in edges for k in e.props})
        types = {k: _ladybug_type([e.props.get(k) for e in edges]) for k in keys}
        pairs = ", ".join(
            f"FROM {a} TO {b}" for a, b in sorted({(kind_of[e.source], kind_of[e.target]) for e in edges})
        )
        columns = "".join(f", `{k}` {t}" for k, t in types.items())
        conn.execute(f"CREATE REL TABLE {type_}({pairs}, session STRING{columns})")
        setters = ", ".join(["session: $s"] + [f"`{k}`: $v{i}" for i, k in enumerate(keys)])
        for e in edges:
            a, b = kind_of[e.source], kind_of[e.target]
            args = {"a": e.source, "b": e.target, "s": e.session}
            args |= {f"v{i}": _ladybug_value(types[k], e.props.get(k)) for i, k in enumerate(keys)}
            conn.execute(
                f"MATCH (a:{a} {{id: $a}}), (b:{b} {{id: $b}}) CREATE (a)-[:{type_} {{{setters}}}]->(b)", args
            )
    return conn


def _ladybug(conn: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = conn.execute(text, {k: v for k, v in params.items() if f"${k}" in text})
    keys = result.get_column_names()
    rows = []
    while result.has_next():
        rows.append(dict(zip(keys, result.get_next(), strict=True)))
    return rows


def _arcadedb_load(records: Records) -> Any:
    import arcadedb_embedded

    from dagmca.store import statements
    from dagmca.store.rows import edge_row, node_row

    db = arcadedb_embedded.create_database(str(Path(tempfile.mkdtemp()) / "db"))
    for statement in statements.schema_statements():
        db.command("opencypher", statement)
    with db.transaction():
        for i, n in enumerate(records[0]):
            db.command("opencypher", statements.create_nodes(n.kind, n.labels), {"rows": [node_row(n, i)]})
        for i, e in enumerate(records[1]):
            db.command("opencypher", statements.create_edges(e.type), {"rows": [edge_row(e, i)]})
    return db


def _arcadedb(db: Any, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return list(db.query("opencypher", text, params).to_list())


ENGINES: dict[str, tuple[str, Loader, Runner]] = {
    "dagmca (this repository)": (
        "dagmca",
        lambda r: embedded.Graph(*r),
        lambda g, t, p: embedded.run(g, t, p)[1],
    ),
    "grand-cypher": ("grandcypher", _networkx, _grand),
    "nxcypher": ("nxcypher", _networkx, _nxcypher),
    "cypherast": ("cypherast", _cypherast_load, _cypherast),
    "graphqlite": ("graphqlite", _graphqlite_load, _graphqlite),
    "ladybug": ("ladybug", _ladybug_load, _ladybug),
    "cypherlite": ("cypherlite", _cypherlite_load, _cypherlite),
}


def reference(folder: Path) -> tuple[dict[str, Records], dict[tuple[str, str], list[dict[str, Any]]]]:
    """The stores' records, and each cookbook query's rows on the Bolt server."""
    records, rows = {}, {}
    with BoltServer.in_child_process(len(STORES)) as targets:
        for (name, (make, session, sessions)), target in zip(STORES.items(), targets, strict=True):
            store = SQLiteStore(folder / f"{name}.db")
            store.init_schema()
            make(store, folder / name)
            records[name] = store_records(store)
            with connect(target) as dst:
                dst.init_schema()
                for s in [*sessions, PERSONA_SESSION]:
                    push_session(store, dst, s)
                for q in COOKBOOK:
                    if q.name not in NOT_ON_THE_TEST_SERVER:
                        rows[(name, q.name)] = records_to_rows(dst.run_query(q.text, {"session": session}))[1]
            store.close()
    return records, rows


def measure(engine: str, records: dict[str, Records], ref: dict[tuple[str, str], Any], runs: int) -> None:
    _, load, run = ENGINES[engine]
    same = total = 0
    loads: list[float] = []
    answers: list[float] = []
    for attempt in range(runs):
        load_s = answer_s = 0.0
        for name, recs in records.items():
            started = time.perf_counter()
            try:
                graph = load(recs)
            except Exception as exc:
                print(f"{engine:28} cannot load: {type(exc).__name__}: {str(exc).splitlines()[0][:90]}")
                return
            load_s += time.perf_counter() - started
            started = time.perf_counter()
            for q in COOKBOOK:
                if (name, q.name) not in ref:
                    continue
                try:
                    rows = [
                        {k: output(v) for k, v in r.items()}
                        for r in run(graph, q.text, {"session": STORES[name][1]})
                    ]
                    ok = comparable(q.text, rows, ordered=False) == comparable(
                        q.text, ref[(name, q.name)], ordered=False
                    )
                except Exception:
                    ok = False
                if attempt == 0:
                    same, total = same + ok, total + 1
            answer_s += time.perf_counter() - started
        loads.append(load_s)
        answers.append(answer_s)
    print(f"{engine:28} {same:>3}/{total:<3} same rows   load {statistics.median(loads):6.3f} s   "
          f"answer all {statistics.median(answers):6.3f} s   (medians of {runs})")  # fmt: skip


def at_scale(nodes: int, edges: int) -> None:
    records = synthetic_session(nodes, edges, session="bench")
    started = time.perf_counter()
    graph = embedded.Graph(*records)
    print(f"\nsynthetic store: {len(records[0]):,} nodes, {len(records[1]):,} edges; "
          f"loaded in {time.perf_counter() - started:.2f} s")  # fmt: skip
    for q in COOKBOOK:
        started = time.perf_counter()
        rows = embedded.run(graph, q.text, {"session": "bench", "search": "revenue"})[1]
        print(f"  {q.name:38} {time.perf_counter() - started:6.3f} s  {len(rows):>5} rows")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument(
        "--arcadedb", action="store_true", help="also ArcadeDB embedded in this process (a JVM)"
    )
    parser.add_argument(
        "--scale-only", action="store_true", help="only the synthetic store: no server, no comparison"
    )
    args = parser.parse_args()
    if args.scale_only:
        at_scale(args.nodes, args.edges)
        return
    if args.arcadedb:
        ENGINES["arcadedb-embedded (in process)"] = ("arcadedb_embedded", _arcadedb_load, _arcadedb)
    with tempfile.TemporaryDirectory() as tmp:
        records, ref = reference(Path(tmp))
    queries = len(COOKBOOK) - len(NOT_ON_THE_TEST_SERVER)
    print(f"{len(ref)} comparisons: {queries} cookbook queries x {len(STORES)} stores")
    for engine, (module, _, _) in ENGINES.items():
        try:
            __import__(module)
        except ImportError:
            print(f"{engine:28} not installed")
            continue
        measure(engine, records, ref, 1 if "arcadedb" in engine else args.runs)
    at_scale(args.nodes, args.edges)


if __name__ == "__main__":
    main()
