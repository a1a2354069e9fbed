"""The dissent beside an answer: what the retrieved part of the corpus has not settled.
Read from the graph, never from the model: two debates judged to contradict each other
that no synthesis reconciled, and the open stubs among the retrieved nodes."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.ask.corpus import Corpus
from dagmca.ask.models import Contradiction, Dissent, Hit, OpenQuestion
from dagmca.graph import NodeKind, TensionStatus

MAX_OPEN = 8  # open questions listed, in retrieval order


def dissent(corpus: Corpus, retrieved: Sequence[Hit]) -> Dissent:
    """`retrieved`: the hits, then their expansion (which brings in the debates a hit's
    debate contradicts, so a contradiction touching a hit has both sides here)."""
    ids = {h.id for h in retrieved}
    contradictions = []
    for source, target, session, reason in corpus.contradicts:
        if source in ids and target in ids and not corpus.reconciled(source, target):
            contradictions.append(
                Contradiction(
                    source=source,
                    target=target,
                    session=session,
                    source_question=_question(corpus, source),
                    target_question=_question(corpus, target),
                    reason=reason,
                )
            )
    open_questions = []
    for hit in retrieved:
        entry = corpus.entries.get(hit.id)
        if entry is None or entry.kind is not NodeKind.TENSION or entry.status != TensionStatus.STUB.value:
            continue
        open_questions.append(
            OpenQuestion(
                id=entry.id,
                session=entry.session,
                question=entry.question,
                urgency=entry.urgency,
                debate=entry.debate,
            )
        )
        if len(open_questions) == MAX_OPEN:
            break
    return Dissent(contradictions=contradictions, open_questions=open_questions)


def _question(corpus: Corpus, debate: str) -> str:
    entry = corpus.entries.get(debate)
    return entry.question if entry is not None else ""
