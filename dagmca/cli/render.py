"""What the reading commands show in the terminal: the session tree, the tables of a
session's metrics, its answers, its status, query rows and the sessions across a store,
and the phrases the run's summary (summary.py) shares with them: the claims' origins, the
calls by role, the embedding's counts."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from dagmca.graph import EdgeType, NodeKind, NodeRecord
from dagmca.text import clip

if TYPE_CHECKING:  # types only: importing them costs every command that prints a table
    from dagmca.metrics.citations import Citations
    from dagmca.metrics.ledger import LedgerShares
    from dagmca.store.base import GraphStore


def _origins(s: LedgerShares) -> str:
    """The shares by origin, in the order
    passage/single/recombined/emergent/integrator/inferred/unsupported."""
    values = (s.passage, s.single, s.recombined, s.emergent, s.integrator, s.inferred, s.unsupported)
    return "/".join(f"{v:.0%}" for v in values)


# what a share means: the same procedure gives some share of any answer's claims these
# origins by chance, and only an eval measures how much (docs/concepts/ledger.md)
CONTROL_NOTE = (
    "a share alone has no scale: traced against this session's sources, a lone agent's answer that never "
    "read them gets some claims single, recombined or emergent too; `dagmca eval --ledger final` with the "
    "single arm measures that share (the control), and only an emergent share above it is the debate's"
)


def citations_row(c: Citations | None) -> str:
    """What the final cites: its claims with and without a citation, and those removed."""
    if c is None:
        return "- (no final, or integrated before citations were counted)"
    share = f" ({c.cited_share:.0%})" if c.cited_share is not None else ""
    return (
        f"{c.cited} of {c.claims} claims cite a section{share}; {c.uncited} uncited; "
        f"{c.removed} citation(s) removed (labels of no section given)"
    )


def claims_row(s: LedgerShares | None) -> str:
    """The emergence ledger's shares of a set of claims: the novelty of an answer."""
    if s is None:
        return "not traced (`dagmca ledger SESSION` traces it)"
    untraced = f"; {s.untraced} more not traced yet (a budget ran out)" if s.untraced else ""
    return (
        f"{s.claims} claims: {s.passage:.0%} passage (the passage states it), {s.single:.0%} single "
        f"(a specialist's turn states it), {s.recombined:.0%} recombined (turns by two or more "
        f"specialists state its parts, together all of it), {s.emergent:.0%} emergent (no "
        f"specialist states it; it follows from two or more specialists' points), "
        f"{s.integrator:.0%} integrator (only a coordinator's or the root's text states it), "
        f"{s.inferred:.0%} inferred (it follows from the passage or one specialist), "
        f"{s.unsupported:.0%} unsupported (it follows from nothing said){untraced}"
    )


def across_table(store: GraphStore) -> Table:
    """The relationships between sessions: stubs a later passage answered or made worth a
    revisit, and the checks that left them open."""
    sessions = store.sessions()
    ids = {s.id for s in sessions}
    table = Table("session", "passage", "stubs open", "answered by", "revisited for", "checked against",
                  title="across sessions", title_justify="left")  # fmt: skip
    for s in sessions:
        edges = store.edges(s.id)
        tensions = store.nodes(s.id, NodeKind.TENSION)
        answered = Counter(e.source for e in edges if e.type is EdgeType.SUPERSEDES and e.source in ids)
        revisited = Counter(
            e.target.split("/", 1)[0]
            for e in edges
            if e.type is EdgeType.REFERENCES and e.key.startswith("passage:")
        )
        checked = Counter(e.target for e in edges if e.type is EdgeType.CHECKED_AGAINST and e.target in ids)

        def fmt(c: Counter[str]) -> str:
            return ", ".join(f"{k} ({v})" for k, v in sorted(c.items())) or "-"

        table.add_row(
            s.id,
            clip(str(s.props.get("title", "")), 40),
            str(sum(t.props.get("status") == "stub" for t in tensions)),
            fmt(answered),
            fmt(revisited),
            fmt(checked),
        )
    return table


def _label(n: NodeRecord) -> str:
    p: dict[str, Any] = n.props
    if n.kind is NodeKind.DEBATE:
        return (
            f"[bold]Debate[/] ({p.get('origin')}, depth {p.get('depth')}, {p.get('rounds')} rounds"
            f"{', converged' if p.get('converged') else ''}) {clip(str(p.get('question', '')), 90)}"
        )
    if n.kind is NodeKind.TENSION:
        text = f"[{p.get('status')}] u={p.get('urgency')} {clip(str(p.get('question', '')), 80)}"
        return f"[yellow]Tension[/] {escape(text)}"
    if n.kind is NodeKind.SYNTHESIS:
        text = escape(clip(str(p.get("resolution", "")), 80))
        return f"[magenta]Synthesis[/] sim={p.get('similarity')} {text}"
    if n.kind is NodeKind.FINAL:
        return f"[green]Final[/] {escape(clip(str(p.get('text', '')), 100))}"
    return f"{n.kind.value} {n.id}"


def session_tree(store: GraphStore, session: str) -> Tree:
    nodes = {n.id: n for n in store.nodes(session)}
    edges = store.edges(session)
    head = nodes[session]
    title = f"{session}: {head.props.get('title')} [{head.props.get('status')}]"
    tree = Tree(f"[bold]Session[/] {escape(title)}")

    def edges_in(target: str, type_: EdgeType) -> list[str]:
        return [e.source for e in edges if e.target == target and e.type is type_]

    def edges_out(source: str, type_: EdgeType) -> list[str]:
        return [e.target for e in edges if e.source == source and e.type is type_]

    def add_debate(parent: Tree, debate_id: str) -> None:
        d = nodes[debate_id]
        branch = parent.add(_label(d))
        tensions = [
            n for n in nodes.values() if n.kind is NodeKind.TENSION and n.props.get("debate") == debate_id
        ]
        explored = {e.target: e.source for e in edges if e.type is EdgeType.EXPLORES}
        for t in sorted(tensions, key=lambda t: -float(str(t.props.get("urgency", 0)))):
            node = branch.add(_label(t))
            if t.id in explored:
                add_debate(node, explored[t.id])
            for by in edges_in(t.id, EdgeType.SUPERSEDES):
                node.add(f"superseded by {by}")
        for syn in sorted(
            {
                s
                for child in edges_in(debate_id, EdgeType.BRANCHES_FROM)
                for s in edges_out(child, EdgeType.MERGES_INTO)
            }
        ):
            branch.add(_label(nodes[syn]) + f"  <- {len(edges_in(syn, EdgeType.MERGES_INTO))} branches")

    for d in (n for n in nodes.values() if n.kind is NodeKind.DEBATE and n.props.get("origin") == "main"):
        add_debate(tree, d.id)
    for f in (n for n in nodes.values() if n.kind is NodeKind.FINAL):
        tree.add(_label(f))
    return tree


def rows_table(keys: list[str], rows: list[dict[str, Any]], width: int = 120) -> Table:
    """Query rows as a table; structured values shown as compact JSON, long text clipped."""
    import json

    table = Table(*keys)
    for row in rows:
        cells = []
        for key in keys:
            value = row.get(key)
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            cells.append(escape(clip(text, width)))
        table.add_row(*cells)
    return table


def role_calls_text(usage: Any) -> str:
    """`role model: calls, tokens, cost` for each role and model, one per line."""
    return (
        "\n".join(
            f"{u.role} {u.model}: {u.calls:,} calls, {u.tokens:,} tokens, ${u.cost_usd:.4f}" for u in usage
        )
        or "none"
    )


def embedding_text(counts: Any) -> str:
    """Texts embedded, cache hits, and the event loop's embed-wait by check."""
    if counts is None:
        return "- (not counted when this session ran)"
    waits = ", ".join(f"{k} {v:.2f}s" for k, v in sorted(counts.wait_s.items(), key=lambda kv: -kv[1]))
    return (
        f"{counts.embedded:,} texts embedded, {counts.hits:,} cache hits; the event loop awaited "
        f"vectors {counts.waits:,} times, {counts.wait_total_s:.2f}s" + (f" ({waits})" if waits else "")
    )


def metrics_tables(m: Any) -> list[Table]:
    """`dagmca metrics`: one table for the session, one row per debate."""
    head = Table(title=f"session {m.session}", show_header=False, title_justify="left")
    head.add_column(style="bold cyan")
    head.add_column()

    def num(v: float | None, digits: int = 2) -> str:
        return "-" if v is None else f"{v:.{digits}f}"

    f = (
        f"chi2 {num(m.differentiation_chi2)}, dof {m.differentiation_dof}, p {num(m.differentiation_p, 4)}"
        if m.differentiation_chi2 is not None
        else "- (fewer than two agents or categories with flags)"
    )
    for label, value in (
        ("lateral revision rate", num(m.lateral_revision_rate)),
        ("specialization S", num(m.specialization, 3)),
        ("context divergence D", num(m.context_divergence, 3)),
        ("functional differentiation F", f),
        (
            "cost per node",
            f"${m.cost_per_node:.6f} ({m.tokens_per_node:.1f} tokens, {m.calls_per_node:.2f} calls)",
        ),
        ("nodes, calls, tokens", f"{m.nodes:,}, {m.llm_calls:,}, {m.tokens:,}"),
        ("cut to fit", f"{m.omitted_chars:,} characters of quoted text left out of prompts"),
        (
            "degenerate output",
            f"{m.reasks} replies asked again; {m.degenerate_texts} texts kept marked degenerate; "
            f"{m.degenerate_reasons} judged reasons kept marked degenerate (not acted on); "
            f"{m.dropped_tensions} tension questions dropped",
        ),
    ):
        head.add_row(label, value)
    head.add_row("calls by role", role_calls_text(m.by_role))
    head.add_row("embedding", embedding_text(m.embedding))
    ledger = m.ledger
    head.add_row("emergence ledger: final", claims_row(ledger.final if ledger else None))
    head.add_row("citations of the final", citations_row(m.citations))
    if ledger is not None:
        head.add_row("read against a control", CONTROL_NOTE)
        if ledger.traced != ledger.final:  # --ledger all: the syntheses' and resolutions' too
            head.add_row("every traced text", claims_row(ledger.traced))
        head.add_row("originate the final's claims", _counts(ledger.originators))
        head.add_row("first appear in", _counts(ledger.first_appearance))
    for r in getattr(m, "recurrence", []):
        share = "-" if r.share is None else f"{r.share:.0%} [{r.lo:.0%}, {r.hi:.0%}]"
        head.add_row(f"recurring {r.kind}s ({r.study})", f"{r.recurring} of {r.total}: {share}")
    per = Table(title="debates", title_justify="left")
    per.caption = (
        "novelty (est.): resolution sentences with no close sentence in the children's last round, "
        "by cosine, a similarity estimate; claims p/s/r/e/g/i/u: the ledger's passage, single, "
        "recombined, emergent, integrator, inferred and unsupported shares of the resolution's claims "
        "(--ledger all)"
    )
    for col in ("debate", "protocol", "rounds", "revision rate", "sibling similarity", "answer length",
                "novelty (est.)", "claims p/s/r/e/g/i/u", "alarms"):  # fmt: skip
        per.add_column(col)
    for d in m.debates:
        alarms = ", ".join(a for a, on in (("collapse", d.collapse_alarm), ("bloat", d.bloat_alarm)) if on)
        per.add_row(
            d.debate.split("/", 1)[-1],
            d.protocol,
            str(d.rounds),
            num(d.lateral_revision_rate),
            ", ".join(f"{s:.2f}" for s in d.sibling_similarity) or "-",
            ", ".join(f"{x:.0f}" for x in d.answer_length) or "-",
            num(d.similarity_novelty),
            "-" if d.ledger is None else f"{_origins(d.ledger)} of {d.ledger.claims}",
            alarms or "none",
        )
    return [head, per, *[answers_table(a) for a in getattr(m, "answers", [])]]


def answers_table(a: Any) -> Table:
    """A question session's answers per round: the tally, the changes, and with a
    reference the flips right to wrong and wrong to right."""
    table = Table(title=f"answers of {a.debate.split('/', 1)[-1]}", title_justify="left")
    table.caption = (
        f"stances: {_counts(a.stances)}; {a.stance_mismatch} stance line(s) saying the opposite of "
        f"the answer (kept while it changed, or changed while it did not); answers read by the "
        f"{a.rule} rule"
        + (f"; reference: {a.reference}" if a.reference else "")
    )
    for col in ("round", "tally", "changes", "right to wrong", "wrong to right"):
        table.add_column(col)
    for r in a.rounds:
        flips = ("-", "-") if r.right_to_wrong is None else (str(r.right_to_wrong), str(r.wrong_to_right))
        table.add_row(str(r.round), _counts(r.tally), str(r.changes), *flips)
    return table


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def status_table(data: dict[str, Any]) -> Table:
    """`dagmca status`: status.json, read by another process than the one running."""
    table = Table(title=f"session {data.get('session')}", show_header=False, title_justify="left")
    table.add_column(style="bold cyan")
    table.add_column(overflow="fold")  # paths and ids whole, as in the summary
    table.add_row("status", f"{data.get('status')} ({data.get('phase')})")
    table.add_row("elapsed", f"{data.get('elapsed_s', 0):.1f}s (updated {data.get('updated_at', '')[:19]})")
    table.add_row(
        "LLM calls",
        f"{data.get('llm_calls', 0):,} made, {data.get('cache_hits', 0):,} from the cache, "
        f"{data.get('llm_failures', 0):,} failed",
    )
    table.add_row("tokens, cost", f"{data.get('tokens', 0):,}, ${data.get('cost_usd', 0):.4f}")
    roles = data.get("roles", [])
    if len({r.get("model") for r in roles}) > 1:  # roles on different models: each one's share
        table.add_row("calls by role", escape(role_calls_text([SimpleNamespace(**r) for r in roles])))
    active = data.get("active_debates", {})
    table.add_row(
        "active debates",
        "\n".join(f"{escape(k)}: round {v.get('round')}, {v.get('turns')} turns" for k, v in active.items())
        or "none",
    )
    table.add_row("debates done", str(data.get("debates_done", 0)))
    agents = data.get("agents", {})
    busy = [a for a in agents.values() if a.get("debate") in active]
    table.add_row(
        "agents",
        "\n".join(f"{escape(str(a.get('debate')))} {a.get('agent')}: {a.get('last_phase')}" for a in busy)
        or f"{len(agents)} seen",
    )
    last = data.get("last_event", {})
    table.add_row("last event", escape(", ".join(f"{k}={clip(str(v), 60)}" for k, v in last.items())))
    return table
