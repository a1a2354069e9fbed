"""What the asks of a store last read, kept in the process by the graph's version.

A process that asks one store again and again (the MCP server, a `Workspace`) would
otherwise read and decode each session's corpus snapshot and its block of vectors on
every ask. A session whose version has not moved since gives the same part and the
same vectors (its version rises at every write to its graph, from this process or
another), so the decoded values are kept here and given back for that version. A
version is stamped with when the session was made: deleting a session forgets its
version, and a session run again under the same id counts from 1 again. One version
is kept per session and kind: a newer one replaces it. The values are kept by the
store object, and go with it."""

from __future__ import annotations

import threading
import weakref
from typing import Generic, TypeVar

from dagmca.store.base import GraphStore

T = TypeVar("T")
Stamp = tuple[int, str]  # a session's graph version, and when its Session node was made


class Recent(Generic[T]):
    """A value per store, key (a session, and what else it depends on) and version."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # asks of different stores run on their own threads
        self._kept: weakref.WeakKeyDictionary[GraphStore, dict[str, tuple[Stamp, T]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, store: GraphStore, key: str, version: Stamp) -> T | None:
        with self._lock:
            found = self._kept.get(store, {}).get(key)
        return found[1] if found is not None and found[0] == version else None

    def put(self, store: GraphStore, key: str, version: Stamp, value: T) -> None:
        with self._lock:
            self._kept.setdefault(store, {})[key] = (version, value)

    def clear(self) -> None:
        """Forget every value (what a new process starts with)."""
        with self._lock:
            self._kept.clear()
