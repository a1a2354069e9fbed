"""What the embedding thread encodes next, and who waits for it.

Two queues: texts a check awaits or will ask for next (urgent), then texts queued ahead
of need, taken a small batch at a time, the latest first (a debate's checks compare its
latest turns; the earliest are read at the session's end), so a check that comes while
one is encoding waits for that batch alone. The loop adds texts and waits; the thread takes batches and wakes
the checks whose texts are all encoded. One lock guards it all, never held while
encoding.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Container, Sequence

# texts queued ahead of need are encoded this many at a time: a check that comes while one
# batch is encoding waits for that batch alone (a larger one saves little per text)
AHEAD_BATCH = 8

Waiter = tuple[set[str], asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class EmbedQueue:
    def __init__(self, encoded: Container[str]) -> None:
        self._encoded = encoded  # the embedder's cache: a text in it needs nothing
        self._urgent: dict[str, None] = {}
        self._ahead: dict[str, None] = {}
        self._encoding: set[str] = set()  # the batch the thread is encoding
        self._waiters: list[Waiter] = []
        self._draining = False  # a drain is submitted or running: it takes what is added
        self._lock = threading.Lock()

    def _add(self, texts: Sequence[str], urgent: bool) -> tuple[list[str], bool]:
        """Under the lock: `texts` not encoded yet into the queue (`urgent`: at its front,
        also those queued ahead); the ones new to it, and whether to start a drain."""
        known = (self._encoded, self._urgent, self._ahead, self._encoding)
        new = [t for t in texts if not any(t in k for k in known)]
        if urgent:
            for text in texts:
                if text not in self._encoded and text not in self._encoding:
                    self._ahead.pop(text, None)
                    self._urgent[text] = None
        else:
            self._ahead.update(dict.fromkeys(new))
        start = bool(new or urgent) and not self._draining
        self._draining = self._draining or start
        return new, start

    def ahead(self, texts: Sequence[str], soon: bool) -> tuple[list[str], bool]:
        """Queue `texts` ahead of need (`soon`: with the urgent ones, a check asks for them
        next): the ones new to the queue, and whether to start a drain."""
        with self._lock:
            return self._add(list(dict.fromkeys(texts)), urgent=soon)

    def wait(
        self, texts: Sequence[str], urgent: bool, done: asyncio.Future[None]
    ) -> tuple[list[str], bool] | None:
        """`done` settles when every text of `texts` is encoded (`urgent`: the missing ones
        go first); None when they all are already. Else the ones new to the queue, and
        whether to start a drain."""
        with self._lock:
            missing = [t for t in texts if t not in self._encoded]
            if not missing:
                return None
            added = self._add(missing, urgent)
            self._waiters.append((set(missing), done.get_loop(), done))
        return added

    def unknown(self, texts: Sequence[str]) -> list[str]:
        """Those of `texts` neither encoded nor queued (nor being encoded): the ones a
        caller encoding them itself has new."""
        with self._lock:
            known = (self._encoded, self._urgent, self._ahead, self._encoding)
            return [t for t in texts if not any(t in k for k in known)]

    def take(self) -> list[str] | None:
        """The thread's next batch: every urgent text, else a few queued ahead; None
        when the queue is empty (the drain ends)."""
        with self._lock:
            if self._urgent:
                batch = list(self._urgent)
                self._urgent.clear()
            elif self._ahead:
                batch = list(itertools.islice(reversed(self._ahead), AHEAD_BATCH))
                for text in batch:
                    del self._ahead[text]
            else:
                self._draining = False
                return None
            self._encoding = set(batch)
            return batch

    def wake(self, batch: Sequence[str], failed: BaseException | None) -> None:
        """After a batch: settle the checks whose texts are all encoded (or, if it
        failed, that waited on any of it, with the error)."""
        taken = set(batch)
        with self._lock:
            self._encoding = set()
            waiting, ready = [], []
            for waiter in self._waiters:
                needs = waiter[0]
                if (failed is not None and needs & taken) or all(t in self._encoded for t in needs):
                    ready.append(waiter)
                else:
                    waiting.append(waiter)
            self._waiters = waiting
        for _, loop, done in ready:
            with contextlib.suppress(RuntimeError):  # its loop closed: nobody waits any more
                loop.call_soon_threadsafe(_settle, done, failed)


def _settle(done: asyncio.Future[None], failed: BaseException | None) -> None:
    if done.done():  # the check was cancelled
        return
    if failed is None:
        done.set_result(None)
    else:
        done.set_exception(failed)
