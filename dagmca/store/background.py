"""A GraphStore whose work runs on one thread of its own, so the event loop never waits
for the database (a Bolt round trip, an SQLite commit) while calls are in flight.

Writes are queued and return at once. One thread does the queued work one item after
another, so writes reach the store in the order they were made, and a read queued
after a write sees it. `aread` awaits a read without blocking the loop, and `awrite` a
write whose end the caller waits for (one that reads what it changes in the same step:
a persona's record, a swarm's attempt); a blocking read made on the loop's own thread
is refused, because it would stall every call in
flight. A write that fails is raised by the next call, and the writes queued after it
are dropped: nothing may refer to what was never written.

The writes queued while the store's thread is busy go to it as one job, which the store
may write in one transaction (`GraphStore.batch`): on a session of thousands of calls, a
job per write cost the event loop a wake-up of that thread for every call record and
cached reply.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from dagmca.graph import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord
from dagmca.store.base import GraphStore
from dagmca.store.search import TextIndex

T = TypeVar("T")


class BlockingReadOnLoop(RuntimeError):
    """A synchronous store read from inside the running event loop."""


class BackgroundStore(GraphStore):
    """Wraps a store it does not own: `close` stops the thread and leaves the wrapped
    store open for whoever opened it (and for reading after the run)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1, thread_name_prefix="dagmca-store")
        self._last: Future[None] | None = None
        self._error: BaseException | None = None
        self._inside = threading.local()  # set on the store's thread while it runs a job
        # the writes queued since the last job was handed over, not yet taken by the
        # store's thread (None: none are waiting); writes come from more than one thread
        self._open: list[Callable[[GraphStore], None]] | None = None
        self._lock = threading.Lock()

    # -- the thread ------------------------------------------------------------------
    def _submit(self, fn: Callable[[GraphStore], T]) -> Future[T]:
        self._raise_failure()
        assert self._pool is not None

        def job() -> T:
            if self._error is not None:  # an earlier write failed: do nothing more
                raise self._error
            self._inside.active = True
            try:
                return fn(self.store)
            finally:
                self._inside.active = False

        return self._pool.submit(job)

    def _enqueue(self, fn: Callable[[GraphStore], None]) -> None:
        """A write: queued, not awaited. Its failure is kept and raised later. It joins
        the batch still waiting for the store's thread, or starts one."""
        if self._pool is None:  # closed: the caller's thread owns the store again
            fn(self.store)
            return
        self._raise_failure()
        with self._lock:  # handed over inside it: a read queued after this write runs after it
            if self._open is not None:
                self._open.append(fn)
                return
            batch = [fn]
            self._last = self._submit(lambda store: self._write_batch(store, batch))
            # open to later writes only once handed over: a batch the pool refused (it is
            # closing) must not take writes that would then never run
            self._open = batch

    def _write_batch(self, store: GraphStore, batch: list[Callable[[GraphStore], None]]) -> None:
        with self._lock:  # taken: the writes after this go to a batch of their own
            if self._open is batch:
                self._open = None
        try:
            with store.batch():
                for fn in batch:
                    try:
                        fn(store)
                    except BaseException as exc:  # the writes before it stay; those after are dropped
                        self._error = exc
                        break
        except BaseException as exc:  # the transaction itself failed (locked, commit refused)
            self._error = self._error or exc
        if self._error is not None:
            raise self._error

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise self._error

    def _read(self, fn: Callable[[GraphStore], T]) -> T:
        """A blocking read: off the loop, or after the run. On the store's own thread (a
        job that reads, such as metrics that ask the embedder for kept vectors), at once:
        waiting for the thread there would wait forever."""
        if self._direct():
            return fn(self.store)
        if self._would_block_loop():
            raise BlockingReadOnLoop("a blocking store read on the event loop; use `await store.aread(...)`")
        return self._submit(fn).result()

    def _direct(self) -> bool:
        """No thread to wait for: none was started, or this is it."""
        return self._pool is None or bool(getattr(self._inside, "active", False))

    def _would_block_loop(self) -> bool:
        if self._direct():
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    async def aread(self, fn: Callable[[GraphStore], T]) -> T:
        """Run `fn(store)`, a read, on the store's thread, after every write queued before it."""
        return await self._await(fn)

    async def awrite(self, fn: Callable[[GraphStore], T]) -> T:
        """Run `fn(store)`, which writes (and may read what it changes, in the same step),
        on the store's thread after every write queued before it; return when it is in
        the store, with what `fn` returned. A write nothing waits for is `write`, queued."""
        return await self._await(fn)

    async def _await(self, fn: Callable[[GraphStore], T]) -> T:
        if self._pool is None:
            return fn(self.store)
        return await asyncio.wrap_future(self._submit(fn))

    async def flush(self) -> None:
        """Wait until every queued write is in the store; raise the first that failed."""
        if self._last is not None:
            waiter = asyncio.wrap_future(self._last)
            await asyncio.wait({waiter})
            if not waiter.cancelled():
                waiter.exception()  # seen here; raised below as the failure of the write that failed
        self._raise_failure()

    def close(self) -> None:
        """Finish the queued writes and stop the thread (the wrapped store stays open)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._raise_failure()

    # -- GraphStore --------------------------------------------------------------------
    @property
    def location(self) -> str:
        return self.store.location

    def init_schema(self) -> None:
        self._read(lambda s: s.init_schema())

    def is_initialised(self) -> bool:
        return self._read(lambda s: s.is_initialised())

    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        nodes, edges = list(nodes), list(edges)
        self._enqueue(lambda s: s.write(nodes, edges))

    def prune_llm(self, before: str | None, *, calls: bool = False) -> tuple[int, int]:
        return self._read(lambda s: s.prune_llm(before, calls=calls))

    def record_calls(self, calls: Sequence[CallRecord]) -> None:
        calls = list(calls)
        self._enqueue(lambda s: s.record_calls(calls))

    def cache_put(self, key: str, model: str, value: str) -> None:
        self._enqueue(lambda s: s.cache_put(key, model, value))

    async def acache_get(self, key: str) -> str | None:
        return await self.aread(lambda s: s.cache_get(key))

    def cache_get(self, key: str) -> str | None:
        return self._read(lambda s: s.cache_get(key))

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """In one hop to the store's thread. On the event loop, nothing: what asks there
        (an embedder's kept vectors, for a report computed on the loop) does without
        rather than hold the loop up."""
        if self._would_block_loop():
            return {}
        keys = list(keys)
        return self._read(lambda s: s.cache_get_many(keys))

    def claim(self, key: str, worker: str, ttl_s: float, *, replacing: str | None = None) -> str:
        return self._read(lambda s: s.claim(key, worker, ttl_s, replacing=replacing))

    def release(self, key: str, worker: str) -> None:
        self._enqueue(lambda s: s.release(key, worker))

    def get_node(self, node_id: str) -> NodeRecord | None:
        return self._read(lambda s: s.get_node(node_id))

    def nodes(self, session: str, kind: NodeKind | None = None) -> list[NodeRecord]:
        return self._read(lambda s: s.nodes(session, kind))

    def edges(self, session: str, type_: EdgeType | None = None) -> list[EdgeRecord]:
        return self._read(lambda s: s.edges(session, type_))

    def edge_counts(self, session: str) -> dict[EdgeType, int]:
        return self._read(lambda s: s.edge_counts(session))

    def sessions(self) -> list[NodeRecord]:
        return self._read(lambda s: s.sessions())

    def calls(self, session: str) -> list[CallRecord]:
        return self._read(lambda s: s.calls(session))

    def delete_session(self, session: str, *, force: bool = False) -> tuple[int, int, int]:
        return self._read(lambda s: s.delete_session(session, force=force))

    def text_index(self, *, fulltext: bool = True) -> TextIndex:
        """The wrapped store's, used on the caller's thread: for after a run, or inside
        `aread`."""
        return self.store.text_index(fulltext=fulltext)

    def search_texts(
        self, terms: Sequence[str], sessions: Sequence[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        return self._read(lambda s: s.search_texts(terms, sessions, limit))
