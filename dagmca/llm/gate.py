"""The concurrency limit of a session (or of a build's sessions together): at most
`slots` requests in flight, the waiting ones let in by rank, then in arrival order.

A rank is what the caller's task set with `ranked(...)` (a context variable, so every
call made below it, in tasks it starts too, carries it); unset, 0. The debates rank by
depth (debate/dag/explore.py): a call of a shallower debate goes first, because more
of the DAG waits for that debate to end (its branches, their branches). Which calls
wait changes only when they are sent, never what they ask: the graph is the same.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType

_rank: ContextVar[int] = ContextVar("dagmca_call_rank", default=0)


@contextmanager
def ranked(rank: int) -> Iterator[None]:
    """Calls made inside (and in tasks started inside) wait with `rank`."""
    token = _rank.set(rank)
    try:
        yield
    finally:
        _rank.reset(token)


def current_rank() -> int:
    return _rank.get()


class Gate:
    """An asyncio.Semaphore whose waiters are let in lowest rank first, then first come,
    first served. `async with gate:` takes the caller's rank (`ranked`)."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a gate needs at least one slot")
        self._free = slots
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def locked(self) -> bool:
        return self._free == 0

    async def acquire(self) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (current_rank(), next(self._order), granted))
        try:
            await granted
        except asyncio.CancelledError:
            # let in, then cancelled before it ran: the slot it was given goes on
            if granted.done() and not granted.cancelled():
                self.release()
            raise

    def release(self) -> None:
        while self._waiting:
            _, _, granted = heapq.heappop(self._waiting)
            if not granted.done():  # a cancelled waiter is skipped
                granted.set_result(None)
                return
        self._free += 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
