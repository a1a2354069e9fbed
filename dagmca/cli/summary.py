"""What a run prints about its session: the projection before it starts, and at its end
the summary table with its rows (how the session fitted its model, what the degeneration
guard did, where the tensions went). `dagmca run`, `resume` and `revisit` print it; the
reading commands' renderings are in render.py."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.table import Table

from dagmca.graph import NodeKind, NodeRecord, SessionNode

if TYPE_CHECKING:  # types only: importing them costs every command that prints a table
    from dagmca.debate.estimate import Projection
    from dagmca.store.base import GraphStore


def fitting_rows(s: SessionNode) -> dict[str, str]:
    """How a session fitted its model: context window, passage, what was cut."""
    window = f"{s.context_window:,} tokens" if s.context_window else "unknown"
    assumed = (
        " (assumed: the model is unknown; set --context-window)"
        if s.context_window_source == "assumed"
        else ""
    )
    source = "" if assumed else f" ({s.context_window_source})"
    if s.passage_mode == "sections":
        passage = (
            f"{s.passage_tokens or 0:,} tokens, too long for its share of a prompt: cut into sections, "
            "mapped for the main debate, the most relevant verbatim for each branch"
        )
    else:
        passage = f"{s.passage_tokens or 0:,} tokens, whole in every prompt"
    cut = f"{s.omitted_chars:,} characters of quoted text left out to fit" if s.omitted_chars else "nothing"
    return {
        "context window": f"{window}{source}{assumed}; counted with {s.tokenizer or 'tiktoken cl100k_base'}",
        "passage": passage,
        "cut to fit": cut,
    }


def guard_row(s: SessionNode, degenerate: int) -> str:
    """What the degeneration guard did: replies asked again, texts still degenerate
    (kept, marked, left out of merging and integration), tension questions dropped."""
    return (
        f"{s.reasks} replies asked again for looping or echoing the prompt; {degenerate} texts kept "
        f"marked degenerate; {s.dropped_tensions} tension questions dropped"
    )


def convergence_row(rounds: int, threshold: float, protocol: str, nodes: list[NodeRecord]) -> str:
    """What the convergence check did: it compares a round with the one before, so with
    two rounds or fewer it cannot end a debate early, and the row says so."""
    if protocol != "mca":
        return f"not used: the {protocol} protocol ends by its own rule"
    if rounds <= 2:
        return (
            f"cannot end a debate early with --rounds {rounds}: it compares a round with the one before, "
            "and round 2 is the last (give --rounds 3 or more for it to save rounds)"
        )
    debates = [n for n in nodes if n.kind is NodeKind.DEBATE]
    early = sum(
        bool(n.props.get("converged")) and int(str(n.props.get("rounds", rounds))) < rounds for n in debates
    )
    return (
        f"{early} of {len(debates)} debates stopped before round {rounds} "
        f"(no sentence of the root's output changed more than --convergence-threshold {threshold})"
    )


def ledger_row(nodes: list[NodeRecord], max_open_stubs: int) -> str:
    """The tension ledger: how many tensions, and where each went."""
    status = Counter(str(n.props.get("status")) for n in nodes if n.kind is NodeKind.TENSION)
    return (
        f"{sum(status.values())} tensions: {status['stub']} open stubs, "
        f"{status['selected'] + status['explored']} explored, {status['superseded']} answered, "
        f"{status['duplicate']} merged as duplicates, {status['dropped']} dropped past --max-open-stubs "
        f"{max_open_stubs} (all kept in the graph, with their status and reason)"
    )


def projection_table(p: Projection, model: str) -> Table:
    table = Table(title=f"projected for {model or 'the model'}", title_justify="left")
    table.add_column("calls of", style="bold cyan")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    for kind, r in p.by_kind.items():
        table.add_row(kind, f"{r.min:,.0f}", f"{r.max:,.0f}")
    table.add_row("all calls", f"{p.calls.min:,.0f}", f"{p.calls.max:,.0f}", style="bold")
    table.add_row("debates", f"{p.debates.min:,.0f}", f"{p.debates.max:,.0f}")
    table.add_row("prompt tokens", f"{p.prompt_tokens.min:,.0f}", f"{p.prompt_tokens.max:,.0f}")
    table.add_row("completion tokens", f"{p.completion_tokens.min:,.0f}", f"{p.completion_tokens.max:,.0f}")
    table.add_row("cost", f"${p.cost_usd.min:,.4f}", f"${p.cost_usd.max:,.4f}")
    if len({r.model for r in p.by_role.values()}) > 1:  # roles on different models: each one's share
        for role, share in p.by_role.items():
            table.add_row(
                f"{role.value} ({share.model}): calls, cost",
                f"{share.calls.min:,.0f}, ${share.cost_usd.min:,.4f}",
                f"{share.calls.max:,.0f}, ${share.cost_usd.max:,.4f}",
            )
    for note in p.notes:
        table.caption = (table.caption or "") + note + ". "
    return table


def projection_row(p: Projection, calls: int, prompt_tokens: int, cost: float) -> str:
    """The projection with this run's actuals beside it."""
    return (
        f"calls {p.calls.min:,.0f}-{p.calls.max:,.0f} (made {calls:,}); prompt tokens "
        f"{p.prompt_tokens.min:,.0f}-{p.prompt_tokens.max:,.0f} ({prompt_tokens:,}); cost "
        f"${p.cost_usd.min:.4f}-${p.cost_usd.max:.4f} (${cost:.4f})"
    )


def degenerate_count(nodes: list[NodeRecord]) -> int:
    return sum(bool(n.props.get("degenerate")) for n in nodes)


def summary_table(
    store: GraphStore, session: str, extra: dict[str, str], records: list[NodeRecord] | None = None
) -> Table:
    """`records`: the session's nodes, when the caller has read them already."""
    nodes = Counter(n.kind.value for n in (store.nodes(session) if records is None else records))
    edges = {t.value: n for t, n in store.edge_counts(session).items()}
    table = Table(title=f"session {session}", show_header=False, title_justify="left")
    table.add_column(style="bold cyan")
    # fold: a path or id longer than the column breaks onto the next line whole, where
    # the default would cut it with an ellipsis and leave nothing to copy
    table.add_column(overflow="fold")
    for key, value in extra.items():
        table.add_row(key, value)
    table.add_row("nodes", ", ".join(f"{k} {v}" for k, v in sorted(nodes.items())) or "none")
    table.add_row("edges", ", ".join(f"{k} {v}" for k, v in sorted(edges.items())) or "none")
    return table
