"""The embedder: unit-length sentence vectors, computed on a thread of its own.

`warm_up` starts loading the model there as soon as a run begins; `prefetch` queues
texts the moment they exist, and the `a…` methods compare vectors on the event loop
once they are at hand, awaiting any that are not without blocking it (a model load
takes seconds; an encode, milliseconds). An embedder whose encode is a table lookup
(`encodes_inline`) encodes what a check misses where the check runs, once loaded: a text
a call has just written and a check needs at once cannot be embedded ahead, and the trip
to the thread and back would keep the check waiting longer than the lookup takes. Each
distinct text is encoded once per process.
With `keep_in(store)`, the vectors are also kept in the store's cache, so a resumed or
repeated session encodes nothing it encoded before. Its implementations: `minilm.py`
(the model in plain torch), `static.py`, `onnx.py` and `hashing.py` (for tests).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar, cast

import numpy as np

from dagmca.similarity import counts as session_counts
from dagmca.similarity.counts import EmbedCounts, EmbedPhase
from dagmca.similarity.queue import EmbedQueue

T = TypeVar("T")

# what a check encodes where it runs, at most, with an embedder that `encodes_inline`: a
# new question, a synthesis and its pieces, a root output's sentences (a few table
# lookups each); a larger set (the ledger's sentences, a corpus) goes to the thread
INLINE_CHARS = 8_000

# all-MiniLM-L6-v2 reads at most 256 word pieces (about 180 words) and drops the rest:
# a longer text is compared piece by piece, each piece within that
PIECE_WORDS = 150


def pieces(text: str, size: int = PIECE_WORDS) -> list[str]:
    """`text` itself when it has at most `size` words, else its paragraphs joined or cut
    into pieces of at most `size` words, in order."""
    if len(text.split()) <= size:
        return [text]
    out: list[str] = []
    current: list[str] = []
    for paragraph in text.split("\n"):
        found = paragraph.split()
        for start in range(0, len(found), size):
            piece = found[start : start + size]
            if current and len(current) + len(piece) > size:
                out.append(" ".join(current))
                current = []
            current += piece
    if current:
        out.append(" ".join(current))
    return out


class VectorStore(Protocol):
    """Where vectors outlive the process: the store's cache (a blocking read, off the
    event loop; keeping is queued)."""

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """What it holds of `keys`; nothing where reading would block the event loop."""

    def cache_put(self, key: str, model: str, value: str) -> None: ...


class Embedder(ABC):
    """Unit-length sentence vectors; cosine similarity is their dot product.

    Texts are embedded ahead of need: `prefetch` queues a text the moment it exists and
    returns at once; the embedding thread encodes the queue in small batches while the
    session waits on its model. A check (the `a…` methods) finds its vectors at hand and
    computes on the event loop; a text it needs that is not encoded yet goes to the
    front of the queue, ahead of every text queued ahead of need, and the check awaits
    only that."""

    name = "embedder"  # what its vectors are keyed on in a kept cache
    # Its encode is a table lookup, safe beside the thread's (no lock), a fraction of a
    # millisecond for a check's few texts: a check encodes the texts it misses where it
    # runs instead of awaiting the thread. A transformer's stays on the thread.
    encodes_inline = False

    def __init__(self) -> None:
        self._kept: VectorStore | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # one encode at a time, whichever thread asks
        self._pool: ThreadPoolExecutor | None = None
        self._queue = EmbedQueue(self._cache)  # what the thread encodes next
        # the process's totals (each session also counts its own: similarity/counts.py);
        # counted on the event loop only, where the checks and the texts arrive
        self.counts = EmbedCounts()

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray: ...

    def _prepare(self) -> None:  # noqa: B027 - optional hook: most embedders need nothing
        """Load what encoding needs (a model); called under the lock before encoding."""

    def _loaded(self) -> bool:
        """Whether `_encode` may run without `_prepare` (the model is loaded)."""
        return True

    def _thread(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="dagmca-embed")
        return self._pool

    def warm_up(self) -> None:
        """Start loading in the background; returns at once."""
        self._thread().submit(self._ready)

    def _ready(self) -> None:
        with self._lock:
            self._prepare()

    def _count(self, *, embedded: int = 0, hits: int = 0) -> None:
        for counts in (self.counts, session_counts.current()):
            if counts is not None:
                counts.add(embedded=embedded, hits=hits)

    def _at_hand(self, texts: Sequence[str]) -> bool:
        """Every vector of `texts` encoded already (the cache only grows, and a dict read
        is atomic, so any thread may ask)."""
        return bool(texts) and all(t in self._cache for t in texts)

    def prefetch(self, texts: Sequence[str], *, soon: bool = False) -> None:
        """Queue `texts` for encoding ahead of need and return at once: every text a later
        check compares (turns, flags, resolutions, syntheses), the moment it exists.
        `soon`: a check asks for them next (an observer's question, a synthesis), so they
        go ahead of the rest."""
        new, start = self._queue.ahead(texts, soon)
        self._count(embedded=len(new))
        if start:
            self._thread().submit(self._drain)

    async def _vectors(self, texts: list[str], urgent: bool) -> None:
        """Until every vector of `texts` is encoded (`urgent`: its missing ones first in
        the queue)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        added = self._queue.wait(texts, urgent, done)
        if added is None:
            return
        new, start = added
        self._count(embedded=len(new))
        if start:
            self._thread().submit(self._drain)
        await done

    def _drain(self) -> None:
        """On the thread: encode the queue, awaited texts first, the rest in small batches
        (a check that comes meanwhile waits for one of them at most); wake each check whose
        vectors are then all at hand."""
        while (batch := self._queue.take()) is not None:
            failed: BaseException | None = None
            try:
                self._encode_missing(batch)
            except Exception as exc:  # the checks waiting on these texts fail with it
                failed = exc
            self._queue.wake(batch, failed)

    def keep_in(self, store: VectorStore | None) -> None:
        """Keep vectors in (and read them back from) `store`'s cache; None stops."""
        self._kept = store

    def _key(self, text: str) -> str:
        return "embedding:" + hashlib.sha256(f"{self.name}\n{text}".encode()).hexdigest()

    def _read_kept(self, texts: list[str]) -> None:
        """Into the process's cache: the vectors of `texts` an earlier run kept, in one
        read (none on the event loop: a report computed there just encodes)."""
        store = self._kept
        if store is None or not texts:
            return
        keys = {self._key(text): text for text in texts}
        for key, found in store.cache_get_many(list(keys)).items():
            self._cache[keys[key]] = np.frombuffer(base64.b64decode(found), dtype=np.float32)

    def _keep(self, texts: list[str]) -> None:
        if self._kept is not None:
            for text in texts:
                vec = self._cache[text].astype(np.float32)
                self._kept.cache_put(self._key(text), self.name, base64.b64encode(vec.tobytes()).decode())

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _encode_missing(self, texts: list[str]) -> None:
        """Into the cache: the vectors of `texts` not in it (kept ones read back first)."""
        # Not under the lock: the read waits for the store's thread, and a job there
        # (metrics) may be waiting for the lock to encode.
        self._read_kept([t for t in texts if t not in self._cache])
        with self._lock:
            missing = [t for t in texts if t not in self._cache]
            if missing:
                self._prepare()
                for text, vec in zip(missing, self._encode(missing), strict=True):
                    self._cache[text] = vec
                self._keep(missing)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts`, encoded on the calling thread where not at hand."""
        if not texts:
            return np.zeros((0, 1))
        if not self._at_hand(texts):  # without the lock, which an encode may hold for a while
            self._encode_missing(list(dict.fromkeys(texts)))
        return np.stack([self._cache[t] for t in texts])

    def _encode_here(self, texts: list[str]) -> None:
        """Into the cache, on the calling thread: the vectors of `texts` (not in it), for
        an embedder that `encodes_inline`. Not under the lock, which the thread may hold
        through a batch; the texts the queue holds too are found encoded when it reaches
        them (or, caught mid-batch, encoded twice: the same vector)."""
        self._count(embedded=len(self._queue.unknown(texts)))
        for text, vec in zip(texts, self._encode(texts), strict=True):
            self._cache[text] = vec
        self._keep(texts)

    async def _off_loop(self, fn: Callable[[], T], texts: Sequence[str], phase: EmbedPhase) -> T:
        """`fn` (a product of `texts`' vectors, microseconds) on the loop, once they are
        at hand (encoded here, for an embedder that `encodes_inline`); the time awaited
        for them, by `phase`."""
        distinct = list(dict.fromkeys(texts))
        missing = [t for t in distinct if t not in self._cache]
        self._count(hits=len(distinct) - len(missing))
        if missing and self.encodes_inline and self._loaded() and sum(map(len, missing)) <= INLINE_CHARS:
            self._encode_here(missing)
        elif missing:
            counting = [c for c in (self.counts, session_counts.current()) if c is not None]
            for counts in counting:
                counts.began(phase)
            try:
                await self._vectors(distinct, phase.urgent)
            finally:
                for counts in counting:
                    counts.ended(phase)
        return fn()

    # The `a…` methods: `phase` names the check that awaits, for the session's counts.
    async def aembed(self, texts: Sequence[str], *, phase: EmbedPhase = EmbedPhase.OTHER) -> np.ndarray:
        return await self._off_loop(lambda: self.embed(texts), texts, phase)

    async def asimilarity(self, a: str, b: str, *, phase: EmbedPhase = EmbedPhase.OTHER) -> float:
        return await self._off_loop(lambda: self.similarity(a, b), (a, b), phase)

    async def amatrix(self, texts: Sequence[str], *, phase: EmbedPhase = EmbedPhase.OTHER) -> np.ndarray:
        return await self._off_loop(lambda: self.matrix(texts), texts, phase)

    async def abest_similarity(self, query: str, text: str, *, phase: EmbedPhase = EmbedPhase.OTHER) -> float:
        """`query` against the piece of `text` most like it (all of a short text): the
        model cannot see past the first piece of a long one."""
        return await self._off_loop(lambda: self.best_similarity(query, text), (query, *pieces(text)), phase)

    async def abest_similarities(
        self, queries: Sequence[str], text: str, *, phase: EmbedPhase = EmbedPhase.OTHER
    ) -> np.ndarray:
        """Each query against the piece of `text` most like it: one encode, one product."""
        return await self._off_loop(
            lambda: self.best_similarities(queries, text), (*queries, *pieces(text)), phase
        )

    async def asimilarities(
        self, query: str, texts: Sequence[str], *, phase: EmbedPhase = EmbedPhase.OTHER
    ) -> np.ndarray:
        """`query` against each of `texts`, in one product."""
        return await self._off_loop(lambda: self.similarities(query, texts), (query, *texts), phase)

    def best_similarities(self, queries: Sequence[str], text: str) -> np.ndarray:
        if not queries:
            return np.zeros(0)
        parts = pieces(text)
        vecs = self.embed([*queries, *parts])
        return cast(
            np.ndarray, np.clip((vecs[: len(queries)] @ vecs[len(queries) :].T).max(axis=1), -1.0, 1.0)
        )

    def similarities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        vecs = self.embed([query, *texts])
        return cast(np.ndarray, np.clip(vecs[1:] @ vecs[0], -1.0, 1.0))

    def best_similarity(self, query: str, text: str) -> float:
        vecs = self.embed([query, *pieces(text)])
        return float(np.clip((vecs[1:] @ vecs[0]).max(), -1.0, 1.0))

    def similarity(self, a: str, b: str) -> float:
        va, vb = self.embed([a, b])
        return float(np.clip(va @ vb, -1.0, 1.0))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self.embed(texts)
        return cast(np.ndarray, np.clip(vecs @ vecs.T, -1.0, 1.0))
