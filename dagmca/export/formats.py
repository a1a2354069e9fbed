"""Every export format, from a session's node and edge records.

Each writer is a pure function of the records, so the output is deterministic for a
deterministic session (the snapshot tests rely on it) and needs no store.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx

from dagmca.export.html import to_html
from dagmca.export.style import KIND_COLOURS, style_class
from dagmca.graph import RELATION_EDGES, STRUCTURAL_EDGES, EdgeRecord, NodeRecord
from dagmca.store import statements
from dagmca.store.networkx_view import build_graph
from dagmca.text import one_line


def to_json(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    """Node-link JSON: {"session", "nodes": [{"id", "kind", "labels", ...}], "edges": [...]}."""
    data = {
        "session": session,
        "nodes": [
            {
                "id": n.id,
                "kind": n.kind.value,
                "labels": [n.kind.value, *n.labels],
                "session": n.session,
                "created_at": n.created_at,
                **n.props,
            }
            for n in nodes
        ],
        "edges": [{"source": e.source, "target": e.target, "type": e.type.value, **e.props} for e in edges],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_graphml(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    buf = io.BytesIO()
    nx.write_graphml(build_graph(session, nodes, edges, flat=True), buf, encoding="utf-8", named_key_ids=True)
    return buf.getvalue().decode("utf-8")


def to_gexf(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    g = build_graph(session, nodes, edges, flat=True)
    for _, data in g.nodes(data=True):
        data["label"] = _caption(data)
    for _, _, data in g.edges(data=True):
        data["label"] = data["relationship"]
    buf = io.BytesIO()
    nx.write_gexf(g, buf, encoding="utf-8")
    return buf.getvalue().decode("utf-8")


# -- Cypher ---------------------------------------------------------------------------
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def cypher_literal(value: Any) -> str:
    """A Cypher literal for a property value: strings single-quoted with backslash
    escapes, so no text can end the literal or the statement."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    text = str(value)
    escaped = (
        text.replace("\\", "\\\\")
        .replace("'", "\\'")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f"'{escaped}'"


def _key(name: str) -> str:
    return name if _IDENT.match(name) else "`" + name.replace("`", "``") + "`"


def _map(props: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{_key(k)}: {cypher_literal(v)}" for k, v in props.items()) + "}"


def to_cypher(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    """A parameter-free script that recreates the session in an empty Neo4j database:
    the schema, one CREATE per node, one MATCH … CREATE per edge. Labels and types come
    from the schema's enums; every value is an escaped literal."""
    lines = [
        f"// dagmca session {session}: {len(nodes)} nodes, {len(edges)} edges",
        *statements.schema_statements(),
    ]
    lines[1:] = [s + ";" for s in lines[1:]]
    for seq, n in enumerate(nodes, start=1):
        props = {"id": n.id, "session": n.session, "created_at": n.created_at, "seq": seq, **n.props}
        labels = "".join(f":{label}" for label in (statements.NODE_LABEL, n.kind.value, *n.labels))
        lines.append(f"CREATE (n{labels} {_map(props)});")
    for seq, e in enumerate(edges, start=1):
        props = {"session": e.session, "seq": seq, **e.props}
        lines.append(
            f"MATCH (a:{statements.NODE_LABEL} {{id: {cypher_literal(e.source)}}}), "
            f"(b:{statements.NODE_LABEL} {{id: {cypher_literal(e.target)}}}) "
            f"CREATE (a)-[:{e.type.value} {_map(props)}]->(b);"
        )
    return "\n".join(lines) + "\n"


def cypher_statements(script: str) -> list[str]:
    """The statements of a `to_cypher` script (each on its own line, ';'-terminated)."""
    return [line[:-1] for line in script.splitlines() if line.endswith(";") and not line.startswith("//")]


# -- Mermaid and Graphviz --------------------------------------------------------------
def _caption(data: dict[str, Any], limit: int = 60) -> str:
    kind = data.get("kind", "")
    text = str(
        data.get("question")
        or data.get("resolution")
        or data.get("text")
        or data.get("title")
        or data.get("name")
        or data.get("number")
        or ""
    )
    text = one_line(text, limit)
    return f"{kind}: {text}" if text else str(kind)


def _record_caption(n: NodeRecord) -> str:
    return _caption({"kind": n.kind.value, **n.props})


_MERMAID_SHAPE = {
    "Session": ('(["', '"])'),
    "Debate": ('["', '"]'),
    "Tension": ('{{"', '"}}'),
    "Synthesis": ('(("', '"))'),
    "Final": ('[["', '"]]'),
}


def _mermaid_text(text: str) -> str:
    # Mermaid labels in quotes: entity codes for what would end or confuse them.
    return (
        text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
        .replace("[", "#91;").replace("]", "#93;").replace("{", "#123;").replace("}", "#125;")
        .replace("|", "#124;").replace("`", "#96;")
    )  # fmt: skip


def to_mermaid(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    """A flowchart for Markdown: node ids are n0, n1, … (Mermaid ids must be simple),
    structural edges solid and thick, relations dotted, provenance thin."""
    ids = {n.id: f"n{i}" for i, n in enumerate(nodes)}
    out = ["flowchart TD", f"  %% dagmca session {_mermaid_text(session)}"]
    for n in nodes:
        left, right = _MERMAID_SHAPE.get(n.kind.value, ('("', '")'))
        out.append(f"  {ids[n.id]}{left}{_mermaid_text(_record_caption(n))}{right}")
        out.append(f"  class {ids[n.id]} {style_class(n)}")
    for e in edges:
        if e.source not in ids or e.target not in ids:
            continue
        arrow = "==>" if e.type in STRUCTURAL_EDGES else ("-.->" if e.type in RELATION_EDGES else "-->")
        out.append(f"  {ids[e.source]} {arrow}|{e.type.value}| {ids[e.target]}")
    for kind, colour in KIND_COLOURS.items():
        out.append(f"  classDef {kind} fill:{colour},stroke:#333,color:#111")
    return "\n".join(out) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    out = [
        f'digraph "{_dot_text(session)}" {{',
        "  rankdir=TB;",
        '  node [style=filled, fontname="Helvetica"];',
    ]
    for n in nodes:
        colour = KIND_COLOURS[style_class(n)]
        out.append(f'  "{_dot_text(n.id)}" [label="{_dot_text(_record_caption(n))}", fillcolor="{colour}"];')
    for e in edges:
        style = "bold" if e.type in STRUCTURAL_EDGES else ("dashed" if e.type in RELATION_EDGES else "solid")
        out.append(
            f'  "{_dot_text(e.source)}" -> "{_dot_text(e.target)}" [label="{e.type.value}", style={style}];'
        )
    out.append("}")
    return "\n".join(out) + "\n"


WRITERS: dict[str, Callable[[str, Sequence[NodeRecord], Sequence[EdgeRecord]], str]] = {
    "json": to_json,
    "graphml": to_graphml,
    "gexf": to_gexf,
    "cypher": to_cypher,
    "mermaid": to_mermaid,
    "dot": to_dot,
    "html": to_html,
}
EXTENSIONS = {
    "json": "json",
    "graphml": "graphml",
    "gexf": "gexf",
    "cypher": "cypher",
    "mermaid": "mmd",
    "dot": "dot",
    "html": "html",
}
