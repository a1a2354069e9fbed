"""`dagmca ledger`: a session's claims with their origins and the texts they derive
from. A session with nothing traced yet (one run before the ledger existed, or with
--ledger off) is traced first, with its own settings.

The pipeline is imported inside the command, as `run` does, so that reading a traced
session does not load it."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import noted, out, said
from dagmca.cli.render import claims_row
from dagmca.cli.run import OVERRIDES, in_session, reopened
from dagmca.metrics.ledger import ClaimLine
from dagmca.store import open_existing, require_session, resolve_store
from dagmca.workspace import LedgerReport

# what the ledger may be told beside what `resume` may change: which texts, how many
# claims, and its prefilter
LEDGER_SETTINGS = ("ledger", "ledger_max_claims", "ledger_prefilter", "ledger_candidates")


def claims_table(lines: list[ClaimLine]) -> Table:
    table = Table("claim", "origin", "where from", title="claims", title_justify="left", show_lines=True)
    for c in lines:
        if c.origin == "single":
            first = next((s for s in c.derives_from if s.id == c.first_stated_at), None)
            where = f"first stated by {first.agent}, round {first.round}" if first else str(c.first_stated_at)
        elif c.origin == "recombined":
            where = "parts from " + ", ".join(c.agents) + ", together all of it"
        else:
            where = c.reason
        others = len(c.derives_from)
        texts = f"{others} text{'s' if others != 1 else ''}"
        where += f"\n{texts} state it, a part of it, or what it follows from" if others else ""
        table.add_row(escape(c.text), c.origin, escape(where))
    return table


@o.with_overrides((*OVERRIDES, *LEDGER_SETTINGS))
def ledger(
    overrides: dict[str, Any],
    session: o.SessionArg,
    store: o.Store = None,
    as_json: o.AsJSON = False,
    quiet: o.Quiet = False,
) -> None:
    """Show each claim of a session's final answer (and, traced with --ledger all, of its
    syntheses and resolutions): its origin (passage: the passage states it; single: a
    specialist's turn states it; recombined: turns by two or more specialists state its
    parts, which together support all of it; for a claim none of them states, by one
    entailment check: emergent, it follows from two or more specialists' points;
    integrator, only a coordinator's or the root's text states it; inferred, it follows
    from the passage or one specialist; unsupported, from nothing said) and the texts it
    derives from. A session with nothing traced is traced first
    with its own settings (--ledger final when it ran with the ledger off); so is one
    given a --ledger option or a raised budget. Tracing spends judge calls; what is
    already traced is not asked again."""
    with open_existing(resolve_store(store)) as st:
        node = require_session(st, session)
        # read as it is stored, with no workspace (nor its embedder) opened for it
        report = LedgerReport.of(session, st.nodes(session), st.edges(session))
        if not report.claims or overrides:
            display = reopened(node, overrides, quiet or as_json)
            report = in_session(st, session, lambda ws: ws.ledger(session, events=display, **overrides))
            if report.untraced:
                noted(
                    f"dagmca: note: {report.untraced} claims or texts not traced (budget spent or a call "
                    "failed); run `dagmca ledger` again with a raised budget to trace them"
                )
    if as_json:
        print(json.dumps({"claims": [c.model_dump() for c in report.claims]}, indent=2, ensure_ascii=False))
        return
    out.print(claims_table(report.claims))
    said(f"final answer: {claims_row(report.final)}")
