"""metrics.md: the emergence measures, their thresholds and the metrics models."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from .fields import field_rows
from .markdown import HEADER, code, escape, paragraphs, table
from .source import member_comments


def page_metrics() -> str:
    from dagmca.metrics import measures
    from dagmca.metrics.session import DebateMetrics, SessionMetrics

    path = Path(inspect.getfile(measures))
    comments = member_comments(path)
    out = [
        HEADER,
        "# Metrics\n",
        "The emergence metrics are computed from the stored graph alone, so `dagmca metrics "
        "SESSION` works on any session, and are also written at the end of every run onto the "
        "`Debate` and `Session` nodes (see the [graph schema](graph-schema.md)) and into "
        "`metrics.json` (see [Report files](reports.md)).\n",
        paragraphs(measures.__doc__) + "\n",
        "## Thresholds\n",
    ]
    rows = []
    for name, value in sorted(vars(measures).items()):
        if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool):
            rows.append([code(name), code(str(value)), escape(comments.get(name, ""))])
    out.append(table(["constant", "value", "meaning"], rows))
    out.append("## Measures\n")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            doc = ast.get_docstring(node)
            if not doc:
                continue
            out.append(f"### `{node.name}`\n")
            out.append(paragraphs(doc) + "\n")
    out.append("## Per debate\n")
    out.append(table(["field", "type", "default", "notes"], field_rows(DebateMetrics)))
    out.append("## Per session\n")
    out.append(
        "S and F are computed over a table of agent × tension category: which agent wrote the "
        "turn each tension was flagged at.\n"
    )
    from dagmca.metrics import session as session_metrics

    if hasattr(session_metrics, "agent_key"):
        out.append(paragraphs(session_metrics.agent_key.__doc__) + "\n")
    out.append(table(["field", "type", "default", "notes"], field_rows(SessionMetrics)))
    return "\n".join(out)
