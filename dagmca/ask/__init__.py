"""Asking the stored graph: retrieval over an incremental embedding index and full-text
search, expansion along the graph, an answer from the `final` role's model that cites
the nodes it was given (checked), and the dissent beside it: contradictions no
synthesis reconciled, and open stubs bearing on the question."""

from dagmca.ask.asking import Retrieval, answer, ask, retrieve
from dagmca.ask.models import (
    Answer,
    Citation,
    Contradiction,
    Dissent,
    Hit,
    IndexStats,
    OpenQuestion,
    RemovedCitation,
    Statement,
)
from dagmca.ask.retrieval import RetrievalSettings

__all__ = [
    "Answer",
    "Citation",
    "Contradiction",
    "Dissent",
    "Hit",
    "IndexStats",
    "OpenQuestion",
    "RemovedCitation",
    "Retrieval",
    "RetrievalSettings",
    "Statement",
    "answer",
    "ask",
    "retrieve",
]
