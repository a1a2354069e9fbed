"""What `ask` returns: the answer with its checked citations, the dissent beside it, and
the nodes it was retrieved from. Strict models: the CLI's `--json` is their JSON, and a
reader validates it against them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dagmca.graph import AnswerStatus, NodeKind, Strict

Source = Literal["vector", "fulltext"]


class Hit(Strict):
    """A node retrieval found (`rank` from 1, by the fused score) or that the graph
    expansion brought in beside a hit (`rank` 0, `via` says from where)."""

    id: str
    kind: NodeKind
    session: str
    label: str  # what the node is, in a few words ("Branch debate resolution, depth 1: …")
    text: str
    rank: int = 0
    score: float = 0.0  # the fused score (reciprocal rank fusion); 0 for an expansion
    similarity: float | None = None  # cosine to the question, where the vector ranking had it
    sources: list[Source] = Field(default_factory=list)  # which rankings found it
    via: str = ""  # for an expansion: why it came in ("the debate of …")
    in_context: bool = False  # it went into the model's prompt
    # across samples of its passage (`dagmca stability`): "in 4 of 5 runs"; "" when the
    # node is no finding's member
    recurrence: str = ""


class Statement(Strict):
    """One statement of the answer and the context nodes it cites (checked)."""

    text: str
    cites: list[str] = Field(default_factory=list)


class Citation(Strict):
    """A node the answer cites: it exists and was in the answer's context."""

    id: str
    kind: NodeKind
    session: str
    label: str
    recurrence: str = ""  # across samples of its passage: "in 4 of 5 runs" ("" when not aligned)


class RemovedCitation(Strict):
    """A cited id that was removed: no such node, or a node the model was not given."""

    id: str
    reason: Literal["no such node", "not in the context"]


class Contradiction(Strict):
    """Two retrieved debates judged to contradict each other, which no synthesis
    reconciled (no Synthesis that both merge into)."""

    source: str  # the debate that CONTRADICTS…
    target: str  # …this one
    session: str
    source_question: str
    target_question: str
    reason: str = ""  # the judge's, from the relationship


class OpenQuestion(Strict):
    """An open stub (a tension nobody explored or answered) among the retrieved nodes."""

    id: str
    session: str
    question: str
    urgency: float = 0.0
    debate: str = ""


class Dissent(Strict):
    """What the corpus has not settled, as far as the question reaches."""

    contradictions: list[Contradiction] = Field(default_factory=list)
    open_questions: list[OpenQuestion] = Field(default_factory=list)


class IndexStats(Strict):
    """What keeping the index up to date took on this ask."""

    embedder: str = ""
    indexed: int = 0  # nodes of the sessions asked that the index holds now
    embedded: int = 0  # nodes embedded now (new, or their text changed)
    removed: int = 0  # index rows dropped (nodes gone or no longer indexable)


class Answer(Strict):
    """An answer from the stored graph. `answer` is the statements, each followed by the
    ids it cites; `citations` are those nodes (each exists and was in the context);
    `removed_citations` the cited ids that were dropped, `citations_removed` their count."""

    question: str
    status: AnswerStatus
    answer: str
    supported: Literal["yes", "partly", "no"] | None = None  # the model's own judgment
    statements: list[Statement] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    citations_removed: int = 0
    removed_citations: list[RemovedCitation] = Field(default_factory=list)
    unsettled: str = ""  # what the model says the graph leaves open on the question
    dissent: Dissent = Field(default_factory=Dissent)
    retrieved: list[Hit] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list)
    scope: str = ""  # which sessions were asked, and why those
    note: str = ""  # why there is no model answer, when there is none
    model: str = ""  # the model that answered ("" when none was asked)
    left_out: int = 0  # retrieved nodes left out of the prompt to fit the context window
    omitted_chars: int = 0  # of a text cut to fit, when even one did not fit whole
    index: IndexStats = Field(default_factory=IndexStats)
