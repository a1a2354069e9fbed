"""A query's time limit on the embedded store: the engine's loops (each row a MATCH
finds, each relationship it walks, each row a projection reads) call `Deadline.tick`,
which looks at the clock every few hundred calls and stops the query once it is past
its limit. The engine runs in Python with no thread to interrupt it, so the check is
cooperative: a cartesian product stops within a few milliseconds of its limit."""

from __future__ import annotations

import time

from dagmca.errors import UserError

# How many ticks pass between two looks at the clock: enough that the clock costs
# nothing beside a row's work, few enough that a limit is kept to the millisecond.
_EVERY = 512


class QueryTimeout(UserError):
    """A query that ran past its time limit, stopped."""

    def __init__(self, seconds: float, fix: str = "") -> None:
        super().__init__(
            f"the query ran past its time limit of {seconds:g} s and was stopped",
            fix or "narrow its MATCH (a label, a session, a LIMIT), or raise the limit",
        )
        self.seconds = seconds


class Deadline:
    """`seconds` from now (None: no limit)."""

    __slots__ = ("_at", "_left", "fix", "seconds")

    def __init__(self, seconds: float | None, fix: str = "") -> None:
        self.seconds = seconds
        self.fix = fix
        self._at = time.monotonic() + seconds if seconds is not None else None
        self._left = _EVERY

    def tick(self) -> None:
        """Raise `QueryTimeout` when the limit has passed (checked every few hundred ticks)."""
        self._left -= 1
        if self._left > 0:
            return
        self._left = _EVERY
        self.check()

    def check(self) -> None:
        if self._at is not None and time.monotonic() > self._at:
            assert self.seconds is not None
            raise QueryTimeout(self.seconds, self.fix)


NO_LIMIT = Deadline(None)
