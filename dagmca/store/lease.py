"""One writer per session, and one worker per passage of a build: claims on keys in the
store, each taken in one transaction, renewed while held and given up when done. A
session's lease is the claim whose key is its id (so that a second `run`, `resume`,
`revisit`, `ledger` or `delete` of a session another live process writes is refused
instead of interleaving its writes); a build's passage claims are the same claims (a
passage's key is its session's id), and so is the build's right to link.

A holder renews its claims while it works; one that stopped renewing loses them after
`LEASE_TTL_S`, and one of this machine whose process is gone loses them at once. A
renewal the store fails (a busy SQLite file, say) is tried again; a claim lost (another
holder has it, or it expired unrenewed) stops the holder's work with the loss raised,
so that no two processes write at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from dagmca.errors import DagmcaError, SessionBusy, StoreError
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore

LEASE_TTL_S = 120.0  # a lease its holder stopped renewing is taken over after this
RENEW_S = 30.0
RETRY_S = 2.0  # a renewal the store failed is tried again after this


def holder_id() -> str:
    """This process, as a claim's holder: host, pid and a random part (two holders in
    one process are two holders)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def holder_name(holder: str) -> str:
    """A holder as a person reads it: pid@host."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    return f"{pid}@{host}" if pid else holder


def is_dead(holder: str) -> bool:
    """A holder of this machine whose process is gone (killed, say): its claims need not
    wait out their expiry. A holder elsewhere cannot be seen: its claims expire."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def take(store: GraphStore, key: str, holder: str, ttl_s: float = LEASE_TTL_S) -> str:
    """Take (or renew) the claim `key` for `holder`, taking it over from a dead holder;
    return who holds it then (`holder` when it is ours)."""
    held = store.claim(key, holder, ttl_s)
    if held and held != holder and is_dead(held):
        held = store.claim(key, holder, ttl_s, replacing=held)
    return held


def acquire(store: GraphStore, session: str, holder: str) -> None:
    """The session's lease for `holder`, or SessionBusy naming the live process that has it."""
    held = take(store, session, holder)
    if held != holder:
        raise SessionBusy(session, holder_name(held) if held else "another process")


@contextlib.contextmanager
def session_lease(store: GraphStore, session: str) -> Iterator[str]:
    """The session's lease for this process while the block runs (a short write, as
    `delete`'s: not renewed)."""
    holder = holder_id()
    acquire(store, session, holder)
    try:
        yield holder
    finally:
        with contextlib.suppress(Exception):  # an expiry frees it anyway
            store.release(session, holder)


async def keep(
    store: BackgroundStore,
    key: str,
    holder: str,
    ttl_s: float | None = None,
    every_s: float | None = None,
) -> None:
    """Renew `holder`'s claim `key` for `ttl_s` seconds (default `LEASE_TTL_S`) every
    `every_s` (default `RENEW_S`) until cancelled. A renewal the store fails is tried
    again every `RETRY_S` while the claim lasts. Raises SessionBusy when another holder
    has the claim, and StoreError when it expired before the store let it be renewed
    (another may hold it by then)."""
    ttl_s = LEASE_TTL_S if ttl_s is None else ttl_s
    every_s = RENEW_S if every_s is None else every_s
    renewed = time.monotonic()
    wait = every_s
    while True:
        await asyncio.sleep(wait)
        try:
            now = await store.aread(lambda s: take(s, key, holder, ttl_s))
        except Exception as exc:  # a busy or failing store: the claim stands until its expiry
            if time.monotonic() - renewed >= ttl_s:
                raise StoreError(
                    f"the lease on {key} expired while the store refused to renew it ({exc})",
                    "what was written is kept; run it again when the store answers",
                ) from None
            wait = min(RETRY_S, every_s)
            continue
        if now != holder:
            raise SessionBusy(key, holder_name(now) if now else "another process")
        renewed, wait = time.monotonic(), every_s


def renewing(
    store: BackgroundStore,
    key: str,
    holder: str,
    on_lost: Callable[[DagmcaError], None],
    ttl_s: float | None = None,
    every_s: float | None = None,
) -> asyncio.Task[None]:
    """A task that `keep`s the claim; when it is lost, `on_lost` is told (it stops the
    holder's work) before the task ends with the loss."""

    async def run() -> None:
        try:
            await keep(store, key, holder, ttl_s, every_s)
        except DagmcaError as exc:
            on_lost(exc)
            raise

    return asyncio.create_task(run(), name=f"lease {key}")


class Claims:
    """The claims one holder keeps in a store: a build's (its passages', and the right to
    link), or a session's lease alone (`held`). Each is taken in one transaction and
    renewed from then until it is released; when one is lost, the work `guarding` runs
    is cancelled and the loss raised in its place."""

    def __init__(self, store: BackgroundStore, holder: str | None = None) -> None:
        self.store = store
        self.holder = holder or holder_id()
        self._renewals: dict[str, asyncio.Task[None]] = {}
        self._lost: list[DagmcaError] = []
        self._guarded: asyncio.Task[Any] | None = None

    def holds(self, key: str) -> bool:
        return key in self._renewals

    async def take(self, key: str) -> bool:
        """Claim `key` (taken over from a dead holder) and keep it renewed; False, with
        nothing taken, when another live holder has it."""
        return await self._take(key) == self.holder

    async def acquire(self, key: str) -> None:
        """Claim `key`, or SessionBusy naming the live process that has it."""
        found = await self._take(key)
        if found != self.holder:
            raise SessionBusy(key, holder_name(found) if found else "another process")

    async def _take(self, key: str) -> str:
        if key in self._renewals:
            return self.holder
        found = await self.store.aread(lambda s: take(s, key, self.holder))
        if found == self.holder:
            self._renewals[key] = renewing(self.store, key, self.holder, self._lose)
        return found

    async def release(self, key: str) -> None:
        """Give `key` up: another holder may take it at once (one not held: nothing)."""
        renewal = self._renewals.pop(key, None)
        if renewal is None:
            return
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await renewal
        with contextlib.suppress(Exception):  # its expiry frees it anyway
            await self.store.aread(lambda s: s.release(key, self.holder))

    async def release_all(self) -> None:
        for key in list(self._renewals):
            await self.release(key)

    @contextlib.asynccontextmanager
    async def guarding(self) -> AsyncIterator[None]:
        """The block, stopped when one of these claims is lost: cancelled, with the loss
        (SessionBusy or StoreError, a one-line error) raised in its place."""
        owner = asyncio.current_task()
        assert owner is not None
        if self._lost:
            raise self._lost[0]
        self._guarded = owner
        try:
            yield
        except asyncio.CancelledError:
            if self._lost and owner.uncancel() == 0:
                raise self._lost[0] from None
            raise
        finally:
            self._guarded = None  # a claim lost from here on stops nothing

    def _lose(self, exc: DagmcaError) -> None:
        self._lost.append(exc)
        if self._guarded is not None:
            self._guarded.cancel()


@contextlib.asynccontextmanager
async def held(store: BackgroundStore, key: str) -> AsyncIterator[Claims]:
    """The lease on `key` (a session's id, a study's) for this process while the block
    runs, renewed as it goes: SessionBusy, nothing done, when another live process holds
    it; the block stopped with the loss raised when it is lost. It is given up after
    every write queued inside has reached the store."""
    claims = Claims(store)
    await claims.acquire(key)
    try:
        async with claims.guarding():
            yield claims
    finally:
        await claims.release_all()
