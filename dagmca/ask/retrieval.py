"""Finding the nodes a question is about: a nearest-neighbour ranking over the
embedding index and a full-text ranking, fused by reciprocal rank, then expanded along
the graph to what gives a hit its meaning (its debate, that debate's syntheses, open
stubs and contradictions).

Two rankings because each misses what the other finds: embeddings match a paraphrase
but not a rare name or code (a model has no vector for an identifier it never saw);
full-text matches the exact words and nothing else. Reciprocal rank fusion combines
them by rank alone, so the two scores (a cosine, a BM25 or term count) need no common
scale."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagmca.ask.corpus import Corpus
from dagmca.ask.index import EmbeddingIndex
from dagmca.ask.models import Hit, IndexStats, Source
from dagmca.ask.onstore import OnStore

# Words that say what kind of question it is, not what it is about: searched for, they
# match every text.
STOPWORDS = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
        "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
        "but", "by", "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each",
        "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
        "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me",
        "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
        "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such",
        "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this",
        "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
        "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you",
        "your", "yours", "anyone", "anything", "say", "said", "says", "tell", "think", "debate",
        "debates", "graph",
    }
)  # fmt: skip
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
_WORD = re.compile(r"\w+(?:[-'’]\w+)*")


def search_terms(question: str) -> list[str]:
    """What the full-text search looks for: each quoted phrase whole, then the words
    that are not stop words (a hyphenated code such as `QX-4471` stays one term, searched
    as a phrase), lower case, each once."""
    terms: list[str] = []
    for found in _QUOTED.finditer(question):
        phrase = " ".join(_WORD.findall(found.group(1) or found.group(2))).lower()
        if phrase:
            terms.append(phrase)
    rest = _QUOTED.sub(" ", question)
    for word in _WORD.findall(rest):
        w = word.lower().replace("’", "'")
        if w not in STOPWORDS and (len(w) > 2 or any(c.isdigit() for c in w)):
            terms.append(w)
    return list(dict.fromkeys(terms))


def fuse(rankings: Sequence[Sequence[str]], k: int) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: each node scores the sum over the rankings that hold it
    of 1 / (k + its rank there); best first, ties by first appearance."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, node in enumerate(ranking, start=1):
            scores[node] = scores.get(node, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


@dataclass(frozen=True)
class RetrievalSettings:
    """How much each ranking offers (`candidates`), how many fused hits are kept
    (`hits`), the least cosine the vector ranking counts as a match (`min_similarity`:
    below it a text shares little more than the language with the question), RRF's
    damping constant (`rrf_k`), how many nodes the expansion may add (`expansion`), and
    how many of a debate's open stubs, the most urgent (`stubs`)."""

    candidates: int = 40
    hits: int = 12
    min_similarity: float = 0.2
    rrf_k: int = 60
    expansion: int = 24
    stubs: int = 3


class Retriever:
    """The two rankings over a corpus, fused, and the expansion of the hits."""

    def __init__(self, index: EmbeddingIndex, on_store: OnStore, settings: RetrievalSettings) -> None:
        self.index = index
        self._on_store = on_store
        self.settings = settings

    async def rank(self, corpus: Corpus, question: str) -> tuple[list[Hit], IndexStats]:
        """The fused hits, best first, each with the rankings that found it; and what
        bringing the index up to date took."""
        cfg = self.settings
        [query] = await self.index.embedder.aembed([question])
        stats, vectors = await self.index.update(corpus, int(query.shape[0]))
        by_vector = vectors.nearest(np.asarray(query), cfg.candidates, cfg.min_similarity)
        terms, scope = search_terms(question), corpus.scope.filter
        found = await self._on_store(lambda s: s.search_texts(terms, scope, cfg.candidates)) if terms else []
        # a server's index may hold nodes the corpus leaves out (a degenerate text)
        by_text = [node for node, _ in found if node in corpus.entries]
        similarity = dict(by_vector)
        rankings: dict[Source, list[str]] = {"vector": [n for n, _ in by_vector], "fulltext": by_text}
        hits = []
        for rank, (node, score) in enumerate(fuse(list(rankings.values()), cfg.rrf_k)[: cfg.hits], start=1):
            entry = corpus.entries[node]
            sources: list[Source] = [name for name, ranking in rankings.items() if node in ranking]
            sim = similarity.get(node)
            hits.append(
                Hit(id=node, kind=entry.kind, session=entry.session, label=entry.label, text=entry.text,
                    rank=rank, score=round(score, 6), similarity=None if sim is None else round(sim, 4),
                    sources=sources)
            )  # fmt: skip
        return hits, stats

    def expand(self, corpus: Corpus, hits: Sequence[Hit]) -> list[Hit]:
        """What gives the hits their meaning, in the hits' order: each hit's debate (its
        resolution), the syntheses that debate merged into, the debates it contradicts
        or is contradicted by, and its open stubs; each node once, hits not repeated."""
        seen = {h.id for h in hits}
        out: list[Hit] = []

        def add(node: str, via: str) -> None:
            entry = corpus.entries.get(node)
            if entry is not None and node not in seen and len(out) < self.settings.expansion:
                seen.add(node)
                out.append(Hit(id=node, kind=entry.kind, session=entry.session, label=entry.label,
                               text=entry.text, via=via))  # fmt: skip

        for hit in hits:
            for debate in corpus.debates_of(hit.id):
                if debate != hit.id:
                    add(debate, f"the debate of {hit.id}")
                for synthesis in corpus.syntheses_of.get(debate, []):
                    add(synthesis, f"a synthesis {debate} merged into")
                for other in corpus.contradicting(debate):
                    add(other, f"a debate judged to contradict {debate}")
                for stub in corpus.open_stubs_of.get(debate, [])[: self.settings.stubs]:
                    add(stub, f"an open question left by {debate}")
        return out
