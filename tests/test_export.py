"""Exports: snapshots on a deterministic session, round trips, a parse of each
format, and the Cypher script executed against a real Bolt server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pytest

from dagmca.export.formats import WRITERS, cypher_literal, cypher_statements
from dagmca.graph import EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.check import check_store
from dagmca.store.neo4j import connect
from tests.support.bolt_server import BoltServer
from tests.support.synthetic import synthetic_session

SNAPSHOTS = Path(__file__).parent / "snapshots"
NASTY = (
    'It\'s a "quoted" <script>alert(1)</script> back\\slash | [x] {y} `z`\nnew line; '
    "MATCH (n) DETACH DELETE n //"
)


def session() -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """Small, deterministic, and with text built to break naive escaping."""
    nodes, edges = synthetic_session(200, 260, session="snap", seed=1)
    nasty = NodeRecord(
        id="snap/nasty'id", kind=NodeKind.TENSION, session="snap", created_at="2026-01-01T00:00:00.000+00:00",
        labels=("Stub",), props={"question": NASTY, "urgency": 0.5, "observer": "skeptical", "status": "stub",
                                 "category": "gap", "debate": "snap/main", "rationale": "", "excerpt": NASTY},
    )  # fmt: skip
    edges.append(
        EdgeRecord(source=nasty.id, target="snap/main/r1/t0", type=EdgeType.FLAGGED_AT, session="snap")
    )
    return [*nodes, nasty], edges


@pytest.mark.parametrize(("fmt", "suffix"), [("json", "json"), ("mermaid", "mmd"), ("cypher", "cypher")])
def test_snapshot(fmt: str, suffix: str) -> None:
    nodes, edges = session()
    text = WRITERS[fmt]("snap", nodes, edges)
    path = SNAPSHOTS / f"snap.{suffix}"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1, check it, commit it"
    assert text == path.read_text(encoding="utf-8"), f"{fmt} export changed; UPDATE_SNAPSHOTS=1 to accept"


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_graphml_and_gexf_round_trip(fmt: str, tmp_path: Path) -> None:
    nodes, edges = session()
    path = tmp_path / f"s.{fmt}"
    path.write_text(WRITERS[fmt]("snap", nodes, edges), encoding="utf-8")
    g = nx.read_graphml(path) if fmt == "graphml" else nx.read_gexf(path)
    assert g.number_of_nodes() == len(nodes) and g.number_of_edges() == len(edges)
    back = g.nodes["snap/nasty'id"]
    assert back["question"] == NASTY and back["kind"] == "Tension" and back["labels"] == "Tension:Stub"
    assert back["urgency"] == 0.5
    for n in nodes[:50]:
        data = g.nodes[n.id]
        for key, value in n.props.items():
            expected = json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value
            assert data[key] == expected, (n.id, key)
    types = sorted(d["relationship"] for _, _, d in g.edges(data=True))
    assert types == sorted(e.type.value for e in edges)


@pytest.mark.slow
def test_dot_parses(tmp_path: Path) -> None:
    import pydot

    nodes, edges = session()
    text = WRITERS["dot"]("snap", nodes, edges)
    graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1
    assert len(graphs[0].get_edges()) == len(edges)
    if shutil.which("dot"):  # Debian's graphviz, where installed
        done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count('class="node"') == len(nodes)


def test_mermaid_is_well_formed() -> None:
    nodes, edges = session()
    lines = WRITERS["mermaid"]("snap", nodes, edges).splitlines()
    assert lines[0] == "flowchart TD"
    node_line = re.compile(
        r'^  n\d+(\(\["|\["|\{\{"|\(\("|\[\["|\(")[^"\[\]{}<>|`]*("\]\)|"\]|"\}\}|"\)\)|"\]\]|"\))$'
    )
    edge_line = re.compile(r"^  n\d+ (==>|-\.->|-->)\|[A-Z_]+\| n\d+$")
    other = re.compile(r"^  (%% .*|class n\d+ \w+|classDef \w+ [\w:#,]+)$")
    for line in lines[1:]:
        assert node_line.match(line) or edge_line.match(line) or other.match(line), line
    assert sum(bool(edge_line.match(x)) for x in lines) == len(edges)


def test_cypher_literals_cannot_escape() -> None:
    assert cypher_literal("a'b\\c\nd") == "'a\\'b\\\\c\\nd'"
    assert cypher_literal(["x", "y'"]) == "['x', 'y\\'']"
    assert cypher_literal(True) == "true" and cypher_literal(0.25) == "0.25"


@pytest.mark.slow
def test_cypher_script_recreates_the_session_on_a_bolt_server(bolt_server: BoltServer) -> None:
    nodes, edges = session()
    script = WRITERS["cypher"]("snap", nodes, edges)
    with connect(bolt_server.new_target()) as st:
        for statement in cypher_statements(script):
            st.run_query(statement, {}, write=True)  # type: ignore[attr-defined]
        assert [n.id for n in st.nodes("snap")] == [n.id for n in nodes]
        assert {(n.id, n.kind, n.labels, json.dumps(n.props, sort_keys=True)) for n in st.nodes("snap")} == {
            (n.id, n.kind, n.labels, json.dumps(n.props, sort_keys=True)) for n in nodes
        }
        assert sorted((e.source, e.target, e.type) for e in st.edges("snap")) == sorted(
            (e.source, e.target, e.type) for e in edges
        )
        assert check_store(st, "snap") == []
        assert st.get_node("snap/nasty'id").props["question"] == NASTY  # type: ignore[union-attr]


def test_export_writes_to_out_as_every_command_names_it_and_output_still_works(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dagmca.cli.app import app
    from dagmca.store.sqlite import SQLiteStore

    nodes, edges = session()
    with SQLiteStore(tmp_path / "s.db") as st:
        st.init_schema()
        st.write(nodes, edges)
    base = ["export", "snap", "--store", str(tmp_path / "s.db"), "--format", "mermaid"]
    for given in ("--out", "-o", "--output"):  # --output: the old name, hidden, kept for a release
        target = tmp_path / f"{given.strip('-')}.mmd"
        done = CliRunner().invoke(app, [*base, given, str(target)])
        assert done.exit_code == 0, done.output
        assert target.read_text(encoding="utf-8").startswith("flowchart")
    both = CliRunner().invoke(app, [*base, "--out", "a.mmd", "--output", "b.mmd"])
    assert both.exit_code != 0 and "both given" in str(both.exception)
    shown = CliRunner().invoke(app, ["export", "--help"], terminal_width=100)
    assert "--out" in shown.output and "--output" not in shown.output
