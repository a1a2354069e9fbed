"""Running a function of the store off the event loop: on the store's own thread when
it has one (so it comes after every write queued before it), else on a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore

T = TypeVar("T")


class OnStore(Protocol):
    def __call__(self, fn: Callable[[GraphStore], T], /) -> Awaitable[T]: ...


def runner(store: GraphStore) -> OnStore:
    """How to run a function of `store` without blocking the loop. A plain store is
    used from one worker thread at a time: each call is awaited before the next."""
    if isinstance(store, BackgroundStore):
        return store.aread

    def run(fn: Callable[[GraphStore], T], /) -> Awaitable[T]:
        return asyncio.to_thread(fn, store)

    return run
