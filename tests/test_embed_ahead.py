"""Texts are embedded ahead of need: queued the moment they exist, encoded on the
embedding thread while the session waits on its model, so a check finds its vectors
ready; a check that does need one goes ahead of the queue. Each session counts its
texts embedded, its cache hits and its event loop's waits by check."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from dagmca.cli.render import embedding_text
from dagmca.config import SessionConfig
from dagmca.debate.state import SessionState
from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedLLM
from dagmca.metrics.session import session_metrics
from dagmca.similarity import HashingEmbedder
from dagmca.similarity.counts import EmbedCounts, EmbedPhase, counting
from dagmca.similarity.queue import AHEAD_BATCH
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE

T = TypeVar("T")

# the checks that decide something on texts earlier calls made: not an observer's flag
# (compared with its debate's the moment it exists), a branch's references (only
# written), nor the ledger's (its claims, too, are split out by the call before it)
DECISIONS = set(EmbedPhase) - {EmbedPhase.FLAGS, EmbedPhase.VISIBILITY, EmbedPhase.LEDGER}


class GatedEmbedder(HashingEmbedder):
    """Records every encode's texts, on which thread; with a `gate`, each encode waits
    for it; with `per_text`, each takes that long a text, as a model's does."""

    encodes_inline = False  # stands for a model the thread encodes

    def __init__(self, gate: threading.Event | None = None, per_text: float = 0.0) -> None:
        super().__init__()
        self.gate = gate
        self.per_text = per_text
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self.awaited: list[tuple[EmbedPhase, list[str]]] = []  # by a check, not at hand
        self.holding = threading.Event()  # an encode waits at the gate

    async def held(self) -> None:
        """Until the thread holds a batch at the gate (not a sleep a busy machine outlasts)."""
        while not self.holding.is_set():
            await asyncio.sleep(0.005)

    async def _off_loop(self, fn: Callable[[], T], texts: Sequence[str], phase: EmbedPhase) -> T:
        missing = [t for t in texts if not self._at_hand([t])]
        if missing:
            self.awaited.append((phase, missing))
        return await super()._off_loop(fn, texts, phase)

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.gate is not None:
            self.holding.set()
            self.gate.wait(timeout=30)
        if self.per_text:
            time.sleep(self.per_text * len(texts))
        self.batches.append(list(texts))
        self.threads.add(threading.current_thread().name)
        return super()._encode(texts)

    @property
    def encoded(self) -> list[str]:
        return [t for batch in self.batches for t in batch]


def test_prefetch_returns_at_once_and_a_later_check_finds_the_vectors_ready() -> None:
    gate = threading.Event()
    e = GatedEmbedder(gate)
    texts = [f"turn {i} on road pricing and congestion" for i in range(5)]

    async def run() -> tuple[float, float]:
        started = time.perf_counter()
        e.prefetch(texts)
        e.prefetch(texts[:2])  # queued already: nothing new
        took = time.perf_counter() - started
        gate.set()
        while not e._at_hand(texts):
            await asyncio.sleep(0.01)
        return took, await e.asimilarity(texts[0], texts[1], phase=EmbedPhase.STUBS)

    took, sim = asyncio.run(run())
    e.close()
    assert took < 0.5, "prefetch does not wait for the held encode"
    assert e.threads and all(t.startswith("dagmca-embed") for t in e.threads)
    assert sorted(e.encoded) == sorted(texts), "each text encoded once"
    assert e.counts.embedded == 5 and e.counts.hits == 2
    assert e.counts.waits == 0 and e.counts.wait_s == {}, "the check found its vectors at hand"
    assert sim == HashingEmbedder().similarity(texts[0], texts[1])


def test_a_check_goes_ahead_of_the_texts_queued_ahead_of_need() -> None:
    """A backlog of prefetched texts, encoded a few at a time, the latest first: a check's
    texts (here the earliest prefetched) are encoded right after the batch in progress,
    not after the backlog."""
    gate = threading.Event()
    e = GatedEmbedder(gate)
    backlog = [f"contribution {i} about tolls, buses and councils" for i in range(5 * AHEAD_BATCH)]

    async def run() -> float:
        e.prefetch(backlog)
        await e.held()  # the thread holds its first batch at the gate
        check = asyncio.create_task(
            e.asimilarity("is the toll fair?", backlog[0], phase=EmbedPhase.DUPLICATES)
        )
        await asyncio.sleep(0.05)
        gate.set()
        return await asyncio.wait_for(check, timeout=10)

    sim = asyncio.run(run())
    e.close()
    assert e.batches[0] == backlog[::-1][:AHEAD_BATCH], "in small batches, the latest first"
    assert set(e.batches[1]) == {"is the toll fair?", backlog[0]}, e.batches[1]
    assert sorted(e.encoded) == sorted([*backlog, "is the toll fair?"]), "each text encoded once"
    assert e.counts.waits == 1 and set(e.counts.wait_s) == {"duplicates"}
    assert sim == HashingEmbedder().similarity("is the toll fair?", backlog[0])


def test_a_references_comparison_does_not_jump_the_queue() -> None:
    """A branch's references decide nothing during the session: they wait their turn."""
    gate = threading.Event()
    e = GatedEmbedder(gate)
    backlog = [f"contribution {i} about tolls, buses and councils" for i in range(3 * AHEAD_BATCH)]

    async def run() -> None:
        e.prefetch(backlog)
        await e.held()
        check = asyncio.create_task(e.asimilarities(backlog[0], [backlog[1]], phase=EmbedPhase.VISIBILITY))
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.wait_for(check, timeout=10)

    asyncio.run(run())
    e.close()
    assert set(e.batches[-1]) >= {backlog[0], backlog[1]}, "their turn came last, as queued"


def test_a_failed_encode_fails_the_checks_waiting_on_it() -> None:
    class Broken(HashingEmbedder):
        encodes_inline = False

        def _encode(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("the model would not load")

    e = Broken()

    async def run() -> float:
        return await asyncio.wait_for(e.asimilarity("a", "b", phase=EmbedPhase.STUBS), timeout=10)

    with pytest.raises(RuntimeError, match="would not load"):
        asyncio.run(run())
    e.close()


def test_sessions_sharing_an_embedder_each_count_their_own() -> None:
    e = GatedEmbedder()
    first, second = EmbedCounts(), EmbedCounts()

    async def session(counts: EmbedCounts, texts: list[str]) -> None:
        with counting(counts):
            e.prefetch(texts)
            await e.amatrix(texts, phase=EmbedPhase.MERGING)

    async def run() -> None:
        await asyncio.gather(
            session(first, ["a shared text", "only the first's"]),
            session(second, ["only the second's", "another of the second's", "a third"]),
        )

    asyncio.run(run())
    e.close()
    assert first.embedded + second.embedded == e.counts.embedded == len(set(e.encoded)) == 5
    assert (first.embedded, second.embedded) == (2, 3)
    assert first.hits + second.hits == e.counts.hits


def run_session(store: SQLiteStore, tmp_path: Path, embedder: HashingEmbedder) -> SessionState:
    """A scripted session with branches, on a fake model that takes a while to answer."""
    cfg = SessionConfig(
        llm="fake", cache=False, agent_memory="session", cpp=3, depth=2, rounds=2,
        max_depth=1, max_branches=2, monitor_every="turn",
    )  # fmt: skip
    fake = ScriptedLLM(delay=0.03)

    async def go() -> SessionState:
        async with open_state(
            cfg, store, client=fake, session_id="s1", passage=PASSAGE, embedder=embedder
        ) as state:
            await run_and_report(state, title="test", model="scripted", out_dir=tmp_path / "out")
        return state

    return asyncio.run(go())


@pytest.mark.slow
def test_a_sessions_checks_find_their_vectors_ready_and_it_counts_them(
    store: SQLiteStore, tmp_path: Path
) -> None:
    # an encode as slow as a small model's on a busy core, a model slower still
    embedder = GatedEmbedder(per_text=0.001)
    state = run_session(store, tmp_path, embedder)
    embedder.close()
    counts = state.counts.embed_counts
    assert state.graph.debates["s1/main/b1"].status == "done", "the session branched"
    assert len(embedder.encoded) == len(set(embedder.encoded)), "no text encoded twice"
    assert 0 < counts.embedded <= len(set(embedder.encoded))
    assert counts.hits > counts.embedded, "most lookups found their vectors at hand"
    # every check that decides on texts earlier calls made found them encoded, but for
    # a synthesis checked against the open stubs as soon as its merge call answered
    # a synthesis checked against the open stubs as soon as its merge call answered,
    # and a round's root output, sentence by sentence, against the round before: the
    # convergence check reads the text the round's last call has just written
    syntheses = {s.resolution for s in state.graph.syntheses.values()}
    roots = " ".join(str(r.props.get("root_output", "")) for r in store.nodes("s1", NodeKind.ROUND))
    late = [(p, t) for p, texts in embedder.awaited if p in DECISIONS for t in texts]
    assert all(
        (p is EmbedPhase.STUBS and t in syntheses) or (p is EmbedPhase.CONVERGENCE and t in roots)
        for p, t in late
    ), late
    assert set(counts.wait_s) & {p.value for p in DECISIONS} <= {"stubs", "convergence"}, counts.wait_s
    # a branch's references are compared once it is over, from texts embedded meanwhile
    assert not [t for p, t in embedder.awaited if p is EmbedPhase.VISIBILITY], embedder.awaited
    # on the Session node, and so in `dagmca metrics` (its table and --json)
    node = store.get_node("s1")
    assert node is not None
    assert EmbedCounts.model_validate_json(str(node.props["embedding"])) == counts
    m = session_metrics(store, "s1", HashingEmbedder())
    assert m.embedding == counts
    assert m.model_dump(mode="json")["embedding"]["embedded"] == counts.embedded
    assert f"{counts.embedded:,} texts embedded, {counts.hits:,} cache hits" in embedding_text(m.embedding)


class LookupRecorder(HashingEmbedder):
    """The hashing embedder, a table lookup as the default embedder is (it encodes what a
    check misses where the check runs), recording which checks looked vectors up."""

    def __init__(self) -> None:
        super().__init__()
        self.lookups: Counter[EmbedPhase] = Counter()

    async def _off_loop(self, fn: Callable[[], T], texts: Sequence[str], phase: EmbedPhase) -> T:
        self.lookups[phase] += 1
        return await super()._off_loop(fn, texts, phase)


@pytest.mark.slow  # a whole session with branches
def test_no_check_of_a_session_awaits_an_embedding(store: SQLiteStore, tmp_path: Path) -> None:
    """With a table-lookup embedder, no check waits for the embedding thread: an
    observer's new question, a synthesis, a root output's sentences and the ledger's
    claims (texts a call has just written) are encoded where the check runs; a branch's
    references are compared once it is over, from texts embedded ahead. Counted by the
    session, not timed."""
    embedder = LookupRecorder()
    state = run_session(store, tmp_path, embedder)
    embedder.close()
    checks = {EmbedPhase.FLAGS, EmbedPhase.VISIBILITY, EmbedPhase.CONVERGENCE, EmbedPhase.LEDGER}
    assert checks <= set(embedder.lookups), embedder.lookups
    counts = state.counts.embed_counts
    assert counts.hits > 0 and counts.embedded > 0
    assert (counts.waits, counts.wait_s) == (0, {}), "a check awaited the embedding thread"
