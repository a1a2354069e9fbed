"""One writer per session: a lease on the session's id, held in the store's claims
(the ones `build` takes on its passages, whose key is the same session id), so that a
second `run`, `resume`, `revisit`, `ledger` or `delete` of a session another live
process writes is refused instead of interleaving its writes.

A holder renews its lease while it works; one that stopped renewing loses it after
`LEASE_TTL_S`, and one of this machine whose process is gone loses it at once."""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Iterator

from dagmca.errors import SessionBusy
from dagmca.store.base import GraphStore

LEASE_TTL_S = 120.0  # a lease its holder stopped renewing is taken over after this
RENEW_S = 30.0


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
