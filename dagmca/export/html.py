"""The offline HTML viewer: one self-contained file.

Cytoscape.js (vendored, MIT, `vendor/`) and the session's data are inlined, so the
file opens from disk with no network. What the page draws first is chosen here
(`view.first_view`: about 150 nodes, whatever the session's size); the page lays it
out for its window and creates every other node only when it is unfolded or found.

All text reaches the page as JSON inside a `<script type="application/json">` with
`<`, `>`, `&` and line separators escaped, and the page only ever sets `textContent`:
a passage cannot inject markup or script.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from dagmca.export.style import KIND_COLOURS
from dagmca.export.view import first_view
from dagmca.graph import (
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
# folded at first; a claim is drawn from the panel of the answer it is stated in
LAZY_KINDS = tuple(
    k.value for k in (NodeKind.ROUND, NodeKind.TURN, NodeKind.AGENT, NodeKind.PERSONA, NodeKind.CLAIM)
)
CAPTION = {NodeKind.TENSION: 40, NodeKind.DEBATE: 90}  # characters; the panel shows all


def _caption(n: NodeRecord) -> str:
    p = n.props
    if n.kind is NodeKind.TURN:
        return f"{p.get('agent', '')} {p.get('phase', '')}"
    if n.kind is NodeKind.ROUND:
        return f"round {p.get('number', '')}"
    if n.kind is NodeKind.INTEGRATION:
        return f"integration, part {p.get('part', '')}"
    if n.kind is NodeKind.CLAIM:
        return f"{p.get('origin', '')}: {one_line(str(p.get('text', '')), 60)}"
    if n.kind is NodeKind.FINDING:
        return f"{recurrence(n)}: {one_line(str(p.get('text', '')), 60)}"
    text = str(p.get("question") or p.get("resolution") or p.get("title") or p.get("name") or n.kind.value)
    return one_line(text, CAPTION.get(n.kind, 70))


def recurrence(n: NodeRecord) -> str:
    """A finding's recurrence as the viewer shows it: "3 of 5 runs"."""
    return f"{n.props.get('k', '?')} of {n.props.get('n', '?')} runs"


def _edge_style(type_: EdgeType) -> str:
    if type_ in STRUCTURAL_EDGES:
        return "structure"
    if type_ in RELATION_EDGES:
        return "relation"
    return "provenance"


def viewer_data(session: str, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> dict[str, Any]:
    view = first_view(nodes, edges)
    return {
        "session": session,
        "colours": KIND_COLOURS,
        "lazyKinds": list(LAZY_KINDS),
        "kinds": [k.value for k in NodeKind],
        "edgeTypes": [t.value for t in EdgeType],
        "edgeStyles": {t.value: _edge_style(t) for t in EdgeType},
        "nodes": [
            {
                "id": n.id,
                "kind": n.kind.value,
                "session": n.session,
                "stub": STUB_LABEL in n.labels,
                "caption": _caption(n),
                "debate": str(n.props.get("debate", n.id if n.kind is NodeKind.DEBATE else "")),
                "shown": n.id in view.shown,
                "with": view.comes_with.get(n.id),
                "group": view.group_of.get(n.id),
                "props": {"id": n.id, "created_at": n.created_at, **n.props},
            }
            for n in nodes
        ],
        "groups": [g.as_data() for g in view.groups],
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
    code = (package / "viewer.js").read_text(encoding="utf-8")
    # Inlined as-is: a literal "</script" inside either would end its element.
    assert "</script" not in library.lower() and "</script" not in code.lower()
    data = script_json(viewer_data(session, nodes, edges))
    title = html.escape(session)
    return (
        template.replace("__TITLE__", title)
        .replace("/*__CYTOSCAPE__*/", library)
        .replace("/*__VIEWER__*/", code)
        .replace("/*__DATA__*/", data)
    )
