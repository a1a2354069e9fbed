"""`dagmca ask`: a question to the stored graph, answered with citations to its nodes,
and beside the answer what the debates have not settled."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import noted, out, said
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import AnswerStatus
from dagmca.store import open_existing, resolve_store
from dagmca.text import one_line

if TYPE_CHECKING:
    from dagmca.ask.models import Answer, Dissent

Question = Annotated[str, typer.Argument(metavar="QUESTION", help="The question to ask the graph.")]
Session = Annotated[
    str | None, typer.Option("--session", help="Ask this session (default: the most recent one).")
]
AllSessions = Annotated[bool, typer.Option("--all", help="Ask every session of the store.")]
RetrieveOnly = Annotated[
    bool, typer.Option("--retrieve-only", help="Show the ranked nodes and the dissent; ask no model.")
]


@o.with_settings()
def ask(
    cfg: SessionConfig,
    question: Question,
    session: Session = None,
    all_: AllSessions = False,
    as_json: o.AsJSON = False,
    retrieve_only: RetrieveOnly = False,
    store: o.Store = None,
) -> None:
    """Ask the stored graph a question: the answer cites the nodes it rests on (every
    citation checked), and the dissent lists the contradictions no synthesis reconciled
    and the open questions that bear on it. Retrieval (an embedding index kept in the
    store, and full-text search) asks no model; the answer is one call of the final
    role's model, answered from the response cache when asked again."""
    from dagmca import aio
    from dagmca.ask.client import ask_with_settings
    from dagmca.similarity.choose import make_embedder

    if session is not None and all_:
        raise UserError("give --session or --all, not both")
    if not question.strip():
        raise UserError("the question is empty", 'ask something: dagmca ask "What did the debates conclude?"')
    embedder = make_embedder(cfg.embedder)
    embedder.warm_up()  # loads while the store is read
    try:
        with open_existing(resolve_store(store)) as st:
            sessions = "all" if all_ else ([session] if session is not None else None)
            work = ask_with_settings(
                cfg, st, question, embedder=embedder, sessions=sessions, retrieve_only=retrieve_only
            )
            answer = aio.run(work)
    finally:
        embedder.close()
    if as_json:
        print(answer.model_dump_json(indent=2))
        return
    if session is None and not all_ and answer.sessions:
        noted(f"asking {answer.scope}")
    if answer.status is AnswerStatus.NOTHING:
        said(answer.answer)
        return
    show_answer(answer)


def show_answer(answer: Answer) -> None:
    """The answer (or with --retrieve-only the ranked nodes), what it cites, what was
    removed, the dissent, and a line on what the retrieval found."""
    if answer.status is AnswerStatus.RETRIEVED:
        out.print(_retrieved_table(answer))
    else:
        if answer.answer:
            said(answer.answer)
        if answer.note:
            colour = "red" if answer.status is AnswerStatus.FAILED else "yellow"
            out.print(f"[{colour}]{escape(answer.note)}[/]", highlight=False, soft_wrap=True)
        if answer.citations:
            out.print("\n[bold]Cited[/]")
            for c in answer.citations:
                said(f"  {c.id} — {c.label}")
        if answer.removed_citations:
            removed = "; ".join(f"{r.id} ({r.reason})" for r in answer.removed_citations)
            line = f"{answer.citations_removed} citation(s) removed: {removed}"
            out.print(f"[yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)
        if answer.unsettled:
            out.print(
                f"\n[bold]Unsettled, as the model reads it[/]\n{escape(answer.unsettled)}", soft_wrap=True
            )
    _show_dissent(answer.dissent)
    hits = [h for h in answer.retrieved if h.rank]
    found = f"{len(hits)} nodes retrieved, {len(answer.retrieved) - len(hits)} beside them"
    if answer.status not in (AnswerStatus.RETRIEVED, AnswerStatus.NOTHING):
        used = sum(h.in_context for h in answer.retrieved)
        found += f"; {used} in the answer's context" + (
            f", {answer.left_out} left out to fit" if answer.left_out else ""
        )
    index = answer.index
    found += f"; index: {index.embedded} of {index.indexed} nodes embedded now"
    noted(found + (f"; model {answer.model}" if answer.model else ""))


def _retrieved_table(answer: Answer) -> Table:
    """Hits by rank, then (+) what the expansion added beside them; ids whole (folded,
    never clipped: they are what a reader looks up)."""
    table = Table(title="Retrieved", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("node", overflow="fold", ratio=2)
    table.add_column("kind")
    table.add_column("found by", ratio=1)
    table.add_column("what", ratio=3)
    for h in answer.retrieved:
        rank = str(h.rank) if h.rank else "+"
        found = ", ".join(h.sources) if h.rank else h.via
        what = one_line(f"{h.label}: {h.text}", 160)
        table.add_row(rank, escape(h.id), h.kind.value, escape(found), escape(what))
    return table


def _show_dissent(dissent: Dissent) -> None:
    if dissent.contradictions:
        out.print("\n[bold]Still disputed[/] (judged to contradict; no synthesis reconciled them)")
        for c in dissent.contradictions:
            line = f"  {c.source_question} ({c.source})\n    versus {c.target_question} ({c.target})"
            said(line + (f"\n    {c.reason}" if c.reason else ""))
    if dissent.open_questions:
        out.print("\n[bold]Open questions[/] (stubs nobody explored or answered)")
        for q in dissent.open_questions:
            line = f"  {q.question} (urgency {q.urgency:.2f}; {q.id})"
            said(line)
