"""`dagmca agents`: the persistent agents of a store, what each kept and its
record by tension category."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import out
from dagmca.graph import PERSONA_SESSION, NodeKind, NodeRecord, PersonaNode, node_from_record
from dagmca.store import open_existing, resolve_store


def agent_row(node: NodeRecord) -> dict[str, Any]:
    """A persona as `agents --json` prints it; `rate` is the router's reading of a record."""
    p = node_from_record(node)
    assert isinstance(p, PersonaNode)
    return {
        "id": p.id,
        "name": p.name,
        "perspective": p.perspective,
        "sessions": len(p.sessions),
        "session_ids": p.sessions,
        "kept": p.kept_total,
        "latest_kept": p.kept,
        "record": {
            category: {"trials": r.trials, "successes": r.successes, "rate": round(r.rate, 3)}
            for category, r in sorted(p.record.items())
        },
        "trials": p.trials,
        "successes": p.successes,
        "updated_at": p.updated_at,
    }


def agents(store: o.Store = None, as_json: o.AsJSON = False) -> None:
    """List the agents that persist across the store's sessions: the sessions each took
    part in, its contributions kept, its record by tension category."""
    with open_existing(resolve_store(store)) as st:
        rows = [agent_row(n) for n in st.nodes(PERSONA_SESSION, NodeKind.PERSONA)]
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        out.print("no persistent agents yet: they appear after a run with --agent-memory store (the default)")
        return
    table = Table("agent", "perspective", "sessions", "kept", "record (successes/trials by category)")
    for r in rows:
        record = ", ".join(f"{c} {v['successes']}/{v['trials']}" for c, v in r["record"].items()) or "-"
        table.add_row(r["name"], r["perspective"], str(r["sessions"]), str(r["kept"]), record)
    out.print(table)
