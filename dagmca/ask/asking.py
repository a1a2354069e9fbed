"""Asking the stored graph a question: retrieve (no model), then answer from what was
retrieved (one call, in the `final` role), with the citations checked and the dissent
beside it.

    answer = await ask(store, "Does congestion pricing hurt low-wage workers?",
                       llm=client, embedder=MiniLMEmbedder())

`retrieve` alone is the retrieval (`--retrieve-only`); `answer` turns a retrieval into
an answer. When retrieval finds nothing, no model is asked."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagmca.ask.citations import answer_text, check, unknown_ids
from dagmca.ask.corpus import Corpus, Scope, Sessions, scope_of
from dagmca.ask.dissent import dissent
from dagmca.ask.index import EmbeddingIndex
from dagmca.ask.models import Answer, Dissent, Hit, IndexStats
from dagmca.ask.onstore import OnStore, runner
from dagmca.ask.prompt import pack, reply_schema
from dagmca.ask.recurrence import recurrence_of
from dagmca.ask.retrieval import RetrievalSettings, Retriever
from dagmca.ask.snapshot import load_corpus
from dagmca.graph import AnswerStatus, CallPhase
from dagmca.llm.base import CallMeta, LLMClient, LLMError, Request
from dagmca.llm.tokens import ASSUMED_WINDOW, TokenCounter, known_window
from dagmca.prompts.budget import PromptBudget
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore

ANSWER_TOKENS = 1200  # the reply's cap unless the caller sets one: room for a cited answer


@dataclass
class Retrieval:
    """What retrieval found for a question: the ranked hits and their expansion, the
    dissent among them, and the corpus they came from (for the citation check)."""

    question: str
    scope: Scope
    hits: list[Hit]
    expansion: list[Hit]
    dissent: Dissent
    index: IndexStats
    corpus: Corpus
    on_store: OnStore = field(repr=False)

    @property
    def retrieved(self) -> list[Hit]:
        return [*self.hits, *self.expansion]

    def nothing(self) -> str:
        """Why there is nothing to answer from ("" when there is something)."""
        if self.hits:
            return ""
        if not self.scope.sessions:
            return "the graph holds nothing on this: the store has no session yet"
        if not self.corpus.entries:
            return f"the graph holds nothing on this: {self.scope.note} has no text to search"
        return f"the graph holds nothing on this: nothing in {self.scope.note} matches the question"

    def as_answer(self, status: AnswerStatus = AnswerStatus.RETRIEVED, note: str = "") -> Answer:
        """The retrieval alone, as an Answer with no model's answer."""
        nothing = self.nothing()
        return Answer(
            question=self.question,
            status=AnswerStatus.NOTHING if nothing else status,
            answer=nothing,
            dissent=self.dissent,
            retrieved=self.retrieved,
            sessions=self.scope.sessions,
            scope=self.scope.note,
            note=note or nothing,
            index=self.index,
        )


async def retrieve(
    store: GraphStore,
    question: str,
    *,
    embedder: Embedder,
    sessions: Sessions = None,
    settings: RetrievalSettings | None = None,
) -> Retrieval:
    """The nodes of `sessions` (ids; "all"; None: the most recent session) that the
    question is about, fused from the embedding index (brought up to date first) and
    the full-text search, expanded along the graph, and the dissent among them. No
    model is asked. `store` may be a BackgroundStore (its reads then queue behind its
    writes) or a plain store (read from a worker thread)."""
    on_store = runner(store)
    scope = await on_store(lambda s: scope_of(s, sessions))
    corpus = await on_store(lambda s: load_corpus(s, scope))
    retriever = Retriever(EmbeddingIndex(embedder, on_store), on_store, settings or RetrievalSettings())
    hits: list[Hit] = []
    stats = IndexStats(embedder=embedder.name)
    if corpus.entries:
        hits, stats = await retriever.rank(corpus, question)
    expansion = retriever.expand(corpus, hits)
    found = dissent(corpus, [*hits, *expansion])
    ids = [h.id for h in [*hits, *expansion]]
    recurs = await on_store(lambda s: recurrence_of(s, ids))
    hits, expansion = _recurring(hits, recurs), _recurring(expansion, recurs)
    return Retrieval(question, scope, hits, expansion, found, stats, corpus, on_store)


def _recurring(hits: list[Hit], recurs: dict[str, str]) -> list[Hit]:
    """The hits that are findings' members say so, in their label (what the model reads
    beside the text) and apart."""
    return [
        h.model_copy(update={"recurrence": recurs[h.id], "label": f"{h.label}; recurs {recurs[h.id]}"})
        if h.id in recurs
        else h
        for h in hits
    ]


def budget_for(llm: LLMClient, window: int | None, counter: TokenCounter | None = None) -> PromptBudget:
    """A prompt budget: `window` tokens, else what the endpoint reported, else a known
    model's window, else the assumed one."""
    tokens = window or llm.reported_context_window or known_window(llm.model) or ASSUMED_WINDOW
    return PromptBudget(
        counter=counter or TokenCounter(), window=tokens, turn=0, flag=0, synthesis=0, final=0
    )


async def answer(
    found: Retrieval,
    llm: LLMClient,
    *,
    budget: PromptBudget | None = None,
    max_tokens: int = ANSWER_TOKENS,
    seed: int = 0,
) -> Answer:
    """The model's answer from what `found` retrieved: one structured call (phase
    `ask`, played by the `final` role), its citations checked against the nodes in its
    prompt. Nothing retrieved: no call. A call that fails after its retries leaves the
    retrieval and the dissent, with status `failed`."""
    if not found.hits:
        return found.as_answer()
    packed = pack(found.question, found.retrieved, budget or budget_for(llm, None), max_tokens)
    meta = CallMeta(agent="ask", phase=CallPhase.ASK, omitted_chars=packed.prompt.omitted_chars)
    base = found.as_answer()
    retrieved = [h.model_copy(update={"in_context": h.id in packed.included}) for h in found.retrieved]
    fitted = {"left_out": packed.left_out, "omitted_chars": packed.prompt.omitted_chars}
    base = base.model_copy(update={"retrieved": retrieved, **fitted})
    try:
        schema = reply_schema(tuple(packed.included))
        done = await llm.complete(
            Request(packed.prompt.messages, schema=schema, max_tokens=max_tokens, seed=seed, meta=meta)
        )
    except LLMError as exc:
        return base.model_copy(
            update={"status": AnswerStatus.FAILED, "note": f"the model's call failed: {exc}"}
        )
    reply = done.parsed
    statements = [(str(s.text), [str(c) for c in s.cites]) for s in reply.statements]
    context = [h for h in retrieved if h.in_context]
    outside = unknown_ids((c for _, cites in statements for c in cites), packed.included)
    missing = [i for i in outside if i not in found.corpus.ids]
    stored: set[str] = set()
    if missing:  # ids outside the sessions asked: whether the store has them, to say why they go
        stored = await found.on_store(lambda s: {i for i in missing if s.get_node(i) is not None})
    checked = check(statements, context, lambda i: i in found.corpus.ids or i in stored)
    supported = str(reply.supported)
    status, note = AnswerStatus.ANSWERED, ""
    if supported == "no":
        status, note = (
            AnswerStatus.UNSUPPORTED,
            "the model found no answer to the question in the retrieved nodes",
        )
    elif not checked.citations:
        status, note = AnswerStatus.UNSUPPORTED, "no statement of the answer cites a node it was given"
    return base.model_copy(
        update={
            "status": status,
            "note": note,
            "answer": answer_text(checked.statements),
            "supported": supported,
            "statements": checked.statements,
            "citations": checked.citations,
            "removed_citations": checked.removed,
            "citations_removed": len(checked.removed),
            "unsettled": str(reply.unsettled).strip(),
            "model": llm.model,
        }
    )


async def ask(
    store: GraphStore,
    question: str,
    *,
    llm: LLMClient,
    embedder: Embedder,
    sessions: Sessions = None,
    window: int | None = None,
    max_tokens: int = ANSWER_TOKENS,
    seed: int = 0,
    settings: RetrievalSettings | None = None,
) -> Answer:
    """Retrieve, then answer: see `retrieve` and `answer`. `window`: the model's context
    window in tokens (default: what the endpoint reported, else a known model's)."""
    found = await retrieve(store, question, embedder=embedder, sessions=sessions, settings=settings)
    return await answer(found, llm, budget=budget_for(llm, window), max_tokens=max_tokens, seed=seed)
