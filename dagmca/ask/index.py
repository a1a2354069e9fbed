"""The embedding index of the corpus, kept in the store and brought up to date on each
ask: only nodes it does not hold, or whose text changed since (their hash differs), are
embedded; rows of nodes gone from the graph are dropped. The vectors are read back for
the nearest-neighbour ranking."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dagmca.ask.corpus import Corpus, Entry
from dagmca.ask.models import IndexStats
from dagmca.ask.onstore import OnStore
from dagmca.ask.recent import Recent
from dagmca.similarity import Embedder, pieces
from dagmca.store.base import GraphStore
from dagmca.store.search import IndexRow

# texts embedded and written at a time: a first index of a large store is kept as it
# goes, so an interrupted one resumes where it stopped
BATCH = 256
# each session's block of vectors (ids, float32 rows) read in this process, by version
BLOCKS: Recent[tuple[list[str], bytes]] = Recent()


@dataclass(frozen=True)
class Vectors:
    """The scope's indexed vectors: row i is node `ids[i]`'s unit vector."""

    ids: list[str]
    matrix: np.ndarray

    def nearest(self, query: np.ndarray, limit: int, floor: float) -> list[tuple[str, float]]:
        """The `limit` nodes most like `query` by cosine, at least `floor`, best first
        (ties by id: `ids` come sorted)."""
        if not self.ids or not np.any(query):
            return []
        sims = self.matrix @ query.astype(np.float32)
        keep = np.flatnonzero(sims >= floor)
        # a stable sort over rows read in id order: equal cosines stay in id order
        order = keep[np.argsort(-sims[keep], kind="stable")][:limit]
        return [(self.ids[i], float(sims[i])) for i in order.tolist()]


async def embed_whole(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """One unit vector per text: the mean of its pieces' vectors, so a text longer than
    the model reads is represented by all of it, not its first piece."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    split = [pieces(t) for t in texts]
    flat = [p for ps in split for p in ps]
    vecs = await embedder.aembed(flat)
    out, start = [], 0
    for ps in split:
        mean = vecs[start : start + len(ps)].mean(axis=0)
        start += len(ps)
        norm = float(np.linalg.norm(mean))
        out.append(mean / norm if norm else mean)
    return np.stack(out).astype(np.float32)


class EmbeddingIndex:
    """The index of one embedder over a scope, in the store's `text_index`. `on_store`
    runs a function of the store off the event loop (on its thread, when it has one)."""

    def __init__(self, embedder: Embedder, on_store: OnStore) -> None:
        self.embedder = embedder
        self._on_store = on_store

    async def update(self, corpus: Corpus, dims: int) -> tuple[IndexStats, Vectors]:
        """Bring the index of `corpus` up to date, and return its vectors of `dims`
        dimensions (the embedder's): what it holds is read once, both to tell what to
        embed and to rank by. Nodes it lacks, or whose text changed, are embedded; rows
        of nodes no longer there (and, when the scope is the whole store, of sessions no
        longer there) are dropped. Where the index tracks the graph, each session's
        vectors are then kept as one block at the version its corpus was read at; an
        ask of sessions still at those versions reads the blocks and nothing else."""
        name, scope = self.embedder.name, corpus.scope
        if corpus.versions:
            blocks = await self._on_store(lambda s: _kept(s, name, corpus))
            if blocks is not None and (kept := _joined(blocks, dims)) is not None:
                return IndexStats(embedder=name, indexed=len(corpus.entries)), kept

        def read(store: GraphStore) -> tuple[list[tuple[str, str, bytes]], set[str]]:
            index = store.text_index()
            return index.vectors(name, scope.filter), index.sessions() if scope.every else set()

        held, sessions = await self._on_store(read)
        stale = [node for node, _, _ in held if node not in corpus.entries]
        gone = sorted(sessions - set(scope.sessions))
        if stale or gone:

            def drop(store: GraphStore) -> None:
                index = store.text_index()
                index.drop(stale)
                index.drop_sessions(gone)

            await self._on_store(drop)
        entries = corpus.entries
        vectors = {node: blob for node, sha, blob in held if node in entries and entries[node].sha == sha}
        new: list[Entry] = [e for e in entries.values() if e.id not in vectors]
        for start in range(0, len(new), BATCH):
            batch = new[start : start + BATCH]
            embedded = await embed_whole(self.embedder, [e.text for e in batch])
            rows = [
                IndexRow(e.id, e.session, e.sha, e.text, v.tobytes())
                for e, v in zip(batch, embedded, strict=True)
            ]
            await self._on_store(_put(name, rows))
            vectors.update((r.node, r.vector) for r in rows)
        stats = IndexStats(embedder=name, indexed=len(corpus.entries), embedded=len(new), removed=len(stale))
        if corpus.versions:
            await self._on_store(_keep(name, corpus, vectors))
        return stats, _matrix(vectors, dims)


def _kept(store: GraphStore, embedder: str, corpus: Corpus) -> list[tuple[list[str], bytes]] | None:
    """Each session's vectors as kept after the last ask, when every session of the
    scope is still at the version they were kept at (then nothing is left to embed or
    drop), else None. A scope of the whole store also needs no session to drop. A
    block this process already read at that version is not read again."""
    index = store.text_index()
    if corpus.scope.every and index.sessions() - set(corpus.scope.sessions):
        return None
    blocks = []
    for session in corpus.scope.sessions:
        key, version = _block(session, embedder), corpus.versions[session]
        stamp = (version, corpus.scope.born.get(session, ""))
        kept = BLOCKS.get(store, key, stamp)
        if kept is None:
            kept = index.matrix(session, embedder, version)
            if kept is None:
                return None
            BLOCKS.put(store, key, stamp, kept)
        blocks.append(kept)
    return blocks


def _block(session: str, embedder: str) -> str:
    return f"{session}\x1f{embedder}"


def _joined(blocks: list[tuple[list[str], bytes]], dims: int) -> Vectors | None:
    """The sessions' blocks as one matrix in id order; None when one is not of `dims`."""
    ids = [node for block_ids, _ in blocks for node in block_ids]
    if any(len(block) != len(block_ids) * dims * 4 for block_ids, block in blocks):
        return None
    if not ids:
        return Vectors([], np.zeros((0, dims), dtype=np.float32))
    matrix = np.frombuffer(b"".join(block for _, block in blocks), dtype=np.float32).reshape(len(ids), dims)
    if len(blocks) > 1:  # each block is in id order; together they need sorting
        order = sorted(range(len(ids)), key=ids.__getitem__)
        ids, matrix = [ids[i] for i in order], matrix[order]
    return Vectors(ids, matrix)


def _keep(embedder: str, corpus: Corpus, vectors: dict[str, bytes]) -> Callable[[GraphStore], None]:
    """Keep each session's vectors as one block, at the version its corpus was read at."""
    by_session: dict[str, list[str]] = {s: [] for s in corpus.scope.sessions}
    for node in sorted(vectors):
        by_session[corpus.entries[node].session].append(node)

    def keep(store: GraphStore) -> None:
        index = store.text_index()
        for session, ids in by_session.items():
            block = b"".join(vectors[node] for node in ids)
            index.keep_matrix(session, embedder, corpus.versions[session], ids, block)
            stamp = (corpus.versions[session], corpus.scope.born.get(session, ""))
            BLOCKS.put(store, _block(session, embedder), stamp, (ids, block))

    return keep


def _put(embedder: str, rows: list[IndexRow]) -> Callable[[GraphStore], None]:
    return lambda store: store.text_index().put(embedder, rows)


def _matrix(vectors: dict[str, bytes], dims: int) -> Vectors:
    """The vectors of `dims` dimensions as one matrix, rows in id order (a vector is
    only comparable with its own embedder's)."""
    ids = sorted(node for node, blob in vectors.items() if len(blob) == dims * 4)
    if not ids:
        return Vectors([], np.zeros((0, dims), dtype=np.float32))
    matrix = np.frombuffer(b"".join(vectors[node] for node in ids), dtype=np.float32).reshape(len(ids), dims)
    return Vectors(ids, matrix)
