"""The store's own thread (BackgroundStore): writes return before the store has them,
reach it in the order they were made, and are all there when the run ends; reads come
after the writes before them; the event loop is never blocked by a read; a failed write
stops the ones after it. On the real SQLite store and the Bolt test server."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from dagmca.graph import EdgeRecord, EdgeType, NodeKind, NodeRecord, edge
from dagmca.store.background import BackgroundStore, BlockingReadOnLoop
from dagmca.store.base import GraphStore, StoreError
from dagmca.store.neo4j import connect
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer


def node(i: int) -> NodeRecord:
    return NodeRecord(
        id=f"s/n{i}", kind=NodeKind.DEBATE, session="s", created_at="2026-01-01", props={"i": i}
    )


@pytest.fixture(params=["sqlite", "bolt"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    store: GraphStore
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path / "bg.db")
    else:
        server: BoltServer = request.getfixturevalue("bolt_server")
        store = connect(server.new_target())
    store.init_schema()
    yield store
    store.close()


def test_writes_keep_their_order_and_reads_come_after_them(backend: GraphStore) -> None:
    bg = BackgroundStore(backend)

    async def run() -> list[str]:
        for i in range(30):
            bg.write([node(i)])
            if i:  # each edge needs the node written just before it: order matters
                bg.write([], [edge(f"s/n{i}", f"s/n{i - 1}", EdgeType.REFERENCES, "s")])
        seen = await bg.aread(lambda s: [n.id for n in s.nodes("s")])
        await bg.flush()
        return seen

    seen = asyncio.run(run())
    bg.close()
    assert seen == [f"s/n{i}" for i in range(30)]
    assert len(backend.edges("s")) == 29


class GatedStore(SQLiteStore):
    """The real SQLite store, whose writes wait until the test opens the gate: a store
    as slow as the test wants."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.reached = threading.Event()  # set once a write is held at the gate

    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        self.reached.set()
        self.gate.wait(timeout=30)
        super().write(nodes, edges)


def test_a_write_returns_before_the_store_has_it_and_the_loop_runs_meanwhile(tmp_path: Path) -> None:
    slow = GatedStore(tmp_path / "slow.db")
    slow.init_schema()
    bg = BackgroundStore(slow)

    async def run() -> tuple[int, int]:
        for i in range(5):
            bg.write([node(i)])  # returns: the store's thread is stuck at the gate
        ticks = 0
        for _ in range(10):  # the loop goes on while the writes wait
            await asyncio.sleep(0)
            ticks += 1
        stored_meanwhile = len(slow.nodes("s"))  # read directly, bypassing the queue
        slow.gate.set()
        await bg.flush()
        return ticks, stored_meanwhile

    ticks, stored_meanwhile = asyncio.run(run())
    bg.close()
    assert ticks == 10 and stored_meanwhile == 0
    assert [n.id for n in slow.nodes("s")] == [f"s/n{i}" for i in range(5)]
    slow.close()


def test_awrite_returns_once_its_write_is_in_the_store_after_the_writes_before_it(tmp_path: Path) -> None:
    """A write the caller waits for (a claim, a record read and changed in one step):
    it runs after what was queued before it, and returns what it found once written."""
    slow = GatedStore(tmp_path / "slow.db")
    slow.init_schema()
    bg = BackgroundStore(slow)

    def add_one(store: GraphStore) -> int:
        store.write([node(1)])
        return len(store.nodes("s"))

    async def run() -> tuple[bool, int]:
        bg.write([node(0)])  # queued: the store's thread holds it at the gate
        waiting = asyncio.ensure_future(bg.awrite(add_one))
        for _ in range(10):
            await asyncio.sleep(0)
        held = not waiting.done()
        slow.gate.set()
        return held, await waiting

    held, counted = asyncio.run(run())
    bg.close()
    assert held and counted == 2
    assert [n.id for n in slow.nodes("s")] == ["s/n0", "s/n1"]
    slow.close()


def test_a_blocking_read_on_the_event_loop_is_refused(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    store.init_schema()
    bg = BackgroundStore(store)
    bg.write([node(1)])

    async def run() -> NodeRecord | None:
        with pytest.raises(BlockingReadOnLoop):
            bg.get_node("s/n1")
        return await bg.aread(lambda s: s.get_node("s/n1"))

    assert asyncio.run(run()) is not None
    assert bg.get_node("s/n1") is not None  # off the loop, a blocking read is fine
    bg.close()
    assert bg.get_node("s/n1") is not None  # and after the thread stopped, too
    store.close()


def test_a_failed_write_is_raised_next_and_nothing_queued_after_it_is_written(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "f.db")
    store.init_schema()
    bg = BackgroundStore(store)

    async def run() -> None:
        bg.write([], [edge("s/missing", "s/nowhere", EdgeType.REFERENCES, "s")])  # refused by the store
        bg.write([node(1)])  # queued behind it (the gate holds the first): must not be written
        store.gate.set()
        with pytest.raises(StoreError):
            await bg.flush()
        with pytest.raises(StoreError):
            bg.write([node(2)])

    asyncio.run(run())
    with pytest.raises(StoreError):
        bg.close()
    assert store.nodes("s") == []
    store.close()


class CountingStore(GatedStore):
    """The gated SQLite store, counting the transactions its connection commits."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.commits = 0
        self._conn.set_trace_callback(self._saw)

    def _saw(self, sql: str) -> None:
        self.commits += sql.strip().upper() == "COMMIT"


def test_writes_queued_while_the_thread_is_busy_go_as_one_transaction(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "b.db")
    store.init_schema()
    bg = BackgroundStore(store)

    async def run() -> None:
        bg.write([node(0)])  # the thread takes it and waits at the gate
        assert await asyncio.to_thread(store.reached.wait, 30)
        for i in range(1, 6):  # queued meanwhile: one batch
            bg.write([node(i)])
        bg.cache_put("k", "m", "v")
        store.gate.set()
        await bg.flush()

    before = store.commits
    asyncio.run(run())
    bg.close()
    assert [n.id for n in store.nodes("s")] == [f"s/n{i}" for i in range(6)]
    assert store.cache_get("k") == "v"
    assert store.commits - before == 2, "the first write, then the six queued behind it"
    store.close()


def test_a_failed_write_in_a_batch_keeps_the_writes_before_it(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "k.db")
    store.init_schema()
    bg = BackgroundStore(store)

    async def run() -> None:
        bg.write([node(0)])  # held at the gate: the three below queue as one batch
        assert await asyncio.to_thread(store.reached.wait, 30)
        bg.write([node(1)])
        bg.write([], [edge("s/missing", "s/nowhere", EdgeType.REFERENCES, "s")])  # refused
        bg.write([node(2)])  # after the refused one: dropped
        store.gate.set()
        with pytest.raises(StoreError):
            await bg.flush()

    asyncio.run(run())
    with pytest.raises(StoreError):
        bg.close()
    assert [n.id for n in store.nodes("s")] == ["s/n0", "s/n1"]
    assert store.edges("s") == []
    store.close()


class RefusingBatchStore(SQLiteStore):
    """The real SQLite store whose batch transaction cannot be opened, as when another
    process holds the file's write lock past the busy timeout."""

    def batch(self) -> contextlib.AbstractContextManager[None]:
        raise sqlite3.OperationalError("database is locked")


def test_a_batch_whose_transaction_fails_is_raised_not_lost(tmp_path: Path) -> None:
    store = RefusingBatchStore(tmp_path / "l.db")
    store.init_schema()
    bg = BackgroundStore(store)

    async def run() -> None:
        bg.write([node(0)])
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await bg.flush()

    asyncio.run(run())
    with pytest.raises(sqlite3.OperationalError):
        bg.close()
    store.close()
