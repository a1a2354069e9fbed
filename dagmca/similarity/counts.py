"""What embedding cost a session: texts embedded, lookups the cache answered, and the
time its event loop spent awaiting vectors, by the check that awaited them.

A session counts into its own `EmbedCounts` (`counting`), through a context variable:
the tasks a session starts inherit it, so sessions that share one embedder (a build, an
eval) each count their own, and the embedder's `counts` keeps the process's totals.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum

from pydantic import Field, PrivateAttr

from dagmca.graph import Strict


class EmbedPhase(StrEnum):
    """The check that asks for vectors."""

    FLAGS = "flags"  # an observer's flag against the tensions of its debate's line
    DUPLICATES = "duplicates"  # open stubs against each other, when a debate is committed
    STUBS = "stubs"  # open stubs against a new resolution
    MERGING = "merging"  # sibling branches' resolutions, pairwise
    SELECTION = "selection"  # the diverse selector's choice of stubs to branch on
    VISIBILITY = "visibility"  # which siblings' turns an agent sees
    CONVERGENCE = "convergence"  # a round's answer against the one before
    CREDIT = "credit"  # which contributions survived into a resolution
    SECTIONS = "sections"  # a debate's question against the passage's sections
    LEDGER = "ledger"  # the ledger's source prefilter
    OTHER = "other"

    @property
    def urgent(self) -> bool:
        """Whether its texts go to the front of the embedding queue: a decision waits on
        them. A branch's references are only written, at the session's end."""
        return self is not EmbedPhase.VISIBILITY


class EmbedCounts(Strict):
    """Texts embedded (encoded, or read back from the store's cache) for the session,
    lookups answered by vectors already at hand, and the event loop's waits: by phase,
    the time at least one check of that phase was awaiting vectors (checks waiting
    together count once, so a phase's time is never more than the run's)."""

    embedded: int = 0
    hits: int = 0
    waits: int = 0  # lookups that awaited the embedding thread
    wait_s: dict[str, float] = Field(default_factory=dict)  # by EmbedPhase
    # phase -> (checks awaiting now, since when at least one has)
    _open: dict[str, tuple[int, float]] = PrivateAttr(default_factory=dict)

    def add(self, *, embedded: int = 0, hits: int = 0) -> None:
        self.embedded += embedded
        self.hits += hits

    def began(self, phase: EmbedPhase) -> None:
        """A check of `phase` starts awaiting vectors."""
        waiting, since = self._open.get(phase.value, (0, time.perf_counter()))
        self._open[phase.value] = (waiting + 1, since)
        self.waits += 1

    def ended(self, phase: EmbedPhase) -> None:
        waiting, since = self._open.pop(phase.value)
        if waiting > 1:
            self._open[phase.value] = (waiting - 1, since)
            return
        self.wait_s[phase.value] = round(self.wait_s.get(phase.value, 0.0) + time.perf_counter() - since, 4)

    def merged(self, other: EmbedCounts) -> EmbedCounts:
        """These counts and `other`'s, added up (a session's runs)."""
        wait_s = dict(self.wait_s)
        for phase, seconds in other.wait_s.items():
            wait_s[phase] = round(wait_s.get(phase, 0.0) + seconds, 4)
        return EmbedCounts(
            embedded=self.embedded + other.embedded,
            hits=self.hits + other.hits,
            waits=self.waits + other.waits,
            wait_s=wait_s,
        )

    @property
    def wait_total_s(self) -> float:
        return round(sum(self.wait_s.values()), 4)


_session: ContextVar[EmbedCounts | None] = ContextVar("dagmca_embed_counts", default=None)


def current() -> EmbedCounts | None:
    """The running session's counts, if a session is counting."""
    return _session.get()


@contextmanager
def counting(counts: EmbedCounts) -> Iterator[EmbedCounts]:
    """Count into `counts` in this context (and the tasks started in it)."""
    token = _session.set(counts)
    try:
        yield counts
    finally:
        _session.reset(token)
