"""The offline HTML viewer: one self-contained file (DESIGN §8).

Cytoscape.js (vendored, MIT, `vendor/`) and the session's data are inlined, so the
file opens from disk with no network. Positions are computed here, deterministically:
a layered DAG read top to bottom — session, main debate, its tensions, branches by
depth with their tensions, syntheses, final. Rounds, turns and agents are placed too
but start hidden; a debate's rounds and turns unfold when it is clicked.

All text reaches the page as JSON inside a `<script type="application/json">` with
`<`, `>`, `&` and line separators escaped, and the page only ever sets `textContent`:
a passage cannot inject markup or script.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Sequence
from importlib import resources
from typing import Any

from dagmca.export.style import KIND_COLOURS
from dagmca.models import (
    RELATION_EDGES,
    STRUCTURAL_EDGES,
    STUB_LABEL,
    EdgeRecord,
    EdgeType,
    NodeKind,
    NodeRecord,
)
from dagmca.text import one_line

CYTOSCAPE = "cytoscape-3.34.4.min.js"
ROW = 260  # vertical distance between layers, px
COLUMN = 70  # horizontal distance between neighbouring nodes
HIDDEN_KINDS = (NodeKind.ROUND.value, NodeKind.TURN.value, NodeKind.AGENT.value)


def _int(value: object) -> int:
    return value if isinstance(value, int) else int(str(value)) if str(value).isdigit() else 0


def _layers(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> dict[str, tuple[float, float]]:
    depth = {n.id: _int(n.props.get("depth", 0)) for n in nodes if n.kind is NodeKind.DEBATE}
    debate_of = {n.id: str(n.props.get("debate", "")) for n in nodes}
    parent: dict[str, str] = {}
    merge_parents: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        if e.type is EdgeType.BRANCHES_FROM:
            parent[e.source] = e.target
        elif e.type is EdgeType.MERGES_INTO:
            merge_parents[e.target].append(e.source)
    pos: dict[str, tuple[float, float]] = {}
    max_depth = max(depth.values(), default=0)

    # Debates: one row per depth; children ordered under their parent's position.
    tensions: dict[str, list[str]] = defaultdict(list)
    for n in nodes:
        if n.kind is NodeKind.TENSION:
            tensions[debate_of[n.id]].append(n.id)
    width = {d: max(1, len(tensions[d])) * COLUMN * 0.55 + 2 * COLUMN for d in depth}
    by_depth: dict[int, list[str]] = defaultdict(list)
    for d in depth:  # records are in creation order: stable
        by_depth[depth[d]].append(d)
    for level in range(max_depth + 1):
        row = by_depth.get(level, [])
        row.sort(key=lambda d: (pos.get(parent.get(d, ""), (0.0, 0.0))[0], d))
        x = -sum(width[d] for d in row) / 2
        for d in row:
            pos[d] = (x + width[d] / 2, (2 * level + 1) * ROW)
            x += width[d]
    # Tensions fan out below their debate, in two staggered lines.
    for d, ids in tensions.items():
        dx, dy = pos.get(d, (0.0, (2 * max_depth + 1) * ROW))
        for k, t in enumerate(ids):
            offset = (k - (len(ids) - 1) / 2) * COLUMN * 0.55
            pos[t] = (dx + offset, dy + ROW * (0.45 + 0.2 * (k % 2)))
    # Syntheses below the deepest debates, centred on their parents; the final below all.
    syn_row = (2 * max_depth + 2.5) * ROW
    for s, members in merge_parents.items():
        xs = [pos[m][0] for m in members if m in pos]
        pos[s] = (sum(xs) / len(xs) if xs else 0.0, syn_row)
    # A long passage's sections in a row above the session; partial integrations in a
    # row between the syntheses and the final.
    for row_kind, y in ((NodeKind.SECTION, -ROW * 1.6), (NodeKind.INTEGRATION, syn_row + ROW * 0.5)):
        ids = [n.id for n in nodes if n.kind is row_kind]
        for i, node_id in enumerate(ids):
            pos[node_id] = ((i - (len(ids) - 1) / 2) * COLUMN * 1.2, y)
    for n in nodes:
        if n.kind is NodeKind.SESSION:
            pos[n.id] = (0.0, 0.0)
        elif n.kind is NodeKind.FINAL:
            pos[n.id] = (0.0, syn_row + ROW)
        elif n.kind is NodeKind.SYNTHESIS and n.id not in pos:
            pos[n.id] = (0.0, syn_row)
    # Hidden until unfolded: rounds in a column right of their debate, turns in a row
    # right of their round; agents in a row above the session.
    turns_of: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        if e.type is EdgeType.IN_ROUND:
            turns_of[e.target].append(e.source)
    agents = [n.id for n in nodes if n.kind is NodeKind.AGENT]
    for i, a in enumerate(agents):
        pos[a] = ((i - (len(agents) - 1) / 2) * COLUMN * 1.5, -ROW * 0.8)
    for n in nodes:
        if n.kind is NodeKind.ROUND:
            dx, dy = pos.get(debate_of[n.id], (0.0, 0.0))
            number = _int(n.props.get("number", 1))
            rx, ry = dx + width.get(debate_of[n.id], COLUMN) / 2, dy - ROW * 0.35 + (number - 1) * 48
            pos[n.id] = (rx, ry)
            for k, t in enumerate(turns_of.get(n.id, [])):
                pos[t] = (rx + 60 + k * 34, ry)
    for n in nodes:
        pos.setdefault(n.id, (0.0, (2 * max_depth + 4) * ROW))
    return pos


def _caption(n: NodeRecord) -> str:
    p = n.props
    if n.kind is NodeKind.TURN:
        return f"{p.get('agent', '')} {p.get('phase', '')}"
    if n.kind is NodeKind.ROUND:
        return f"round {p.get('number', '')}"
    if n.kind is NodeKind.INTEGRATION:
        return f"integration, part {p.get('part', '')}"
    text = str(p.get("question") or p.get("resolution") or p.get("title") or p.get("name") or n.kind.value)
    return one_line(text, 70)


def _edge_style(type_: EdgeType) -> str:
    if type_ in STRUCTURAL_EDGES:
        return "structure"
    if type_ in RELATION_EDGES:
        return "relation"
    return "provenance"


def viewer_data(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> dict[str, Any]:
    pos = _layers(nodes, edges)
    return {
        "session": session,
        "colours": KIND_COLOURS,
        "hiddenKinds": list(HIDDEN_KINDS),
        "kinds": [k.value for k in NodeKind],
        "edgeTypes": [t.value for t in EdgeType],
        "edgeStyles": {t.value: _edge_style(t) for t in EdgeType},
        "nodes": [
            {
                "id": n.id,
                "kind": n.kind.value,
                "stub": STUB_LABEL in n.labels,
                "caption": _caption(n),
                "debate": str(n.props.get("debate", n.id if n.kind is NodeKind.DEBATE else "")),
                "x": round(pos[n.id][0], 1),
                "y": round(pos[n.id][1], 1),
                "props": {"id": n.id, "created_at": n.created_at, **n.props},
            }
            for n in nodes
        ],
        "edges": [{"source": e.source, "target": e.target, "type": e.type.value} for e in edges],
    }


def script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: nothing in it can close the element
    or start markup, whatever the passage says."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )  # fmt: skip


def to_html(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> str:
    package = resources.files("dagmca.export")
    template = (package / "viewer.html").read_text(encoding="utf-8")
    library = (package / "vendor" / CYTOSCAPE).read_text(encoding="utf-8")
    # The library is inlined as-is; a literal "</script" inside it would end the element.
    assert "</script" not in library.lower()
    data = script_json(viewer_data(session, nodes, edges))
    title = html.escape(session)
    return (
        template.replace("__TITLE__", title)
        .replace("/*__CYTOSCAPE__*/", library)
        .replace("/*__DATA__*/", data)
    )
