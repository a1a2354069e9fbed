"""Embeddings are computed on the embedder's own thread, never on the event loop's, and
give what the synchronous methods give."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np

from dagmca.similarity import HashingEmbedder
from dagmca.store.background import BackgroundStore
from dagmca.store.sqlite import SQLiteStore


class RecordingEmbedder(HashingEmbedder):
    encodes_inline = False  # stands for a model the thread encodes

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()
        self.prepared = 0

    def _prepare(self) -> None:
        self.prepared += 1
        self.threads.add(threading.current_thread().name)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.threads.add(threading.current_thread().name)
        return super()._encode(texts)


def test_async_embeddings_run_on_the_embedders_thread_and_match_the_sync_ones() -> None:
    e = RecordingEmbedder()
    texts = ["road pricing cuts congestion", "tolls reduce traffic", "a sonnet about grief"]

    async def run() -> tuple[float, np.ndarray, str]:
        e.warm_up()
        sim = await e.asimilarity(texts[0], texts[1])
        matrix = await e.amatrix(texts)
        return sim, matrix, threading.current_thread().name

    sim, matrix, loop_thread = asyncio.run(run())
    assert e.threads and all(t.startswith("dagmca-embed") for t in e.threads)
    assert loop_thread not in e.threads
    fresh = HashingEmbedder()
    assert sim == fresh.similarity(texts[0], texts[1])
    assert np.array_equal(matrix, fresh.matrix(texts))
    e.close()


class BatchRecordingEmbedder(HashingEmbedder):
    """Records the size of every encode; with a `gate`, each encode waits for it (an
    encode as slow as the test wants)."""

    encodes_inline = False  # stands for a model the thread encodes

    def __init__(self, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.gate = gate

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.gate is not None:
            self.gate.wait(timeout=30)
        self.batches.append(len(texts))
        return super()._encode(texts)


def test_concurrent_callers_are_encoded_in_one_batch_and_each_text_once() -> None:
    # the first encode is held until every caller has asked, so the batching does not
    # depend on how the machine schedules the two threads
    e = BatchRecordingEmbedder(gate=threading.Event())
    questions = [f"question number {i} about road pricing" for i in range(40)]

    async def run() -> list[float]:
        # forty callers at once, as forty observers' flags arriving together
        asked = asyncio.gather(*(e.asimilarity(q, "congestion charge") for q in questions))
        await asyncio.sleep(0.05)
        assert e.gate is not None
        e.gate.set()
        return await asked

    sims = asyncio.run(run())
    assert sum(e.batches) == 41, "each distinct text encoded once"
    assert len(e.batches) <= 2, e.batches  # the first caller's, then everyone else's
    fresh = HashingEmbedder()
    assert sims == [fresh.similarity(q, "congestion charge") for q in questions]
    e.close()


def test_vectors_kept_in_the_store_are_not_encoded_again_by_a_later_process(tmp_path: Path) -> None:
    texts = ["road pricing cuts congestion", "tolls reduce traffic", "a sonnet about grief"]

    def session(e: BatchRecordingEmbedder) -> tuple[np.ndarray, float]:
        store = SQLiteStore(tmp_path / "graph.db")
        store.init_schema()
        background = BackgroundStore(store)
        e.keep_in(background)

        async def run() -> tuple[np.ndarray, float]:
            matrix = await e.amatrix(texts)
            return matrix, e.similarity(texts[0], "a text only the second run asks for")

        try:
            return asyncio.run(run())
        finally:
            e.keep_in(None)
            background.close()
            store.close()
            e.close()

    first, second = BatchRecordingEmbedder(), BatchRecordingEmbedder()  # two processes' worth
    before, _ = session(first)
    assert sum(first.batches) == 4
    after, _ = session(second)
    # the three kept texts read back, not encoded; only the new one is
    assert second.batches == [1], second.batches
    assert np.array_equal(before, after)
    # an embedder of another model never reads them
    other = HashingEmbedder(dims=64)
    assert other.name != first.name and other._key(texts[0]) != first._key(texts[0])


def test_a_store_job_that_embeds_reads_kept_vectors_without_waiting_for_itself(tmp_path: Path) -> None:
    """Metrics run on the store's thread and ask the embedder, which reads its kept
    vectors through that same thread: the read must not wait for its own thread."""
    store = SQLiteStore(tmp_path / "graph.db")
    store.init_schema()
    background = BackgroundStore(store)
    e = BatchRecordingEmbedder()
    e.keep_in(background)
    e.embed(["kept before"])

    async def run() -> np.ndarray:
        return await background.aread(lambda s: e.matrix(["kept before", "new in the job"]))

    try:
        matrix = asyncio.run(asyncio.wait_for(run(), timeout=10))
    finally:
        e.keep_in(None)
        background.close()
        store.close()
    assert matrix.shape == (2, 2) and e.batches == [1, 1]


def test_vectors_at_hand_are_compared_on_the_loop_while_the_thread_encodes() -> None:
    """A comparison of texts already encoded does not wait for the embedding thread: it
    answers while the thread is held in a long encode (which holds the encode lock)."""
    e = BatchRecordingEmbedder()
    a, b = "road pricing cuts congestion", "tolls reduce traffic"

    async def run() -> float:
        await e.amatrix([a, b])  # encoded, on the thread
        e.gate = threading.Event()  # the next encode is held
        e.prefetch(["a long passage the thread is busy with"])
        for _ in range(100):  # until the thread is inside that encode
            if e._lock.locked():
                break
            await asyncio.sleep(0.01)
        try:
            return await asyncio.wait_for(e.asimilarity(a, b), timeout=2)
        finally:
            e.gate.set()

    sim = asyncio.run(run())
    e.close()  # the held encode finishes first
    assert sim == HashingEmbedder().similarity(a, b)
    assert e.batches == [2, 1]  # nothing encoded again
