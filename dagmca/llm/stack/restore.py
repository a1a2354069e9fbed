"""What a session's earlier runs spent, charged so that a budget is the session's and
not each run's."""

from __future__ import annotations

from dagmca.graph import CallRecord
from dagmca.llm.base import Completion, LLMClient, Request
from dagmca.llm.stack.base import PREFLIGHT, Wrapper
from dagmca.llm.stack.meter import Meter


class Earlier:
    """The spend of this session's earlier runs, from their call records, on the meter
    the budgets read (its `earlier_*` figures)."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self._replays: dict[str, list[CallRecord]] = {}

    def restore(self, earlier: list[CallRecord], *, replayed: bool) -> None:
        """`replayed` (resume): a call is charged when the cache replays it, as it was
        when it was made, so the resumed run meets its budget at the same step as an
        uninterrupted one would; what is never replayed (failed calls) is charged now.
        Otherwise (revisit: new work after the old) everything is charged now.
        Pre-flight calls are each run's overhead, not the session's work: no budget
        counts them."""
        for record in earlier:
            if record.cache_hit or record.agent == PREFLIGHT:
                continue  # no call was made, or not one a budget counts
            if replayed and record.key and not record.error:
                self._replays.setdefault(record.key, []).append(record)
            else:
                self.meter.charge_earlier(record)

    def replayed(self, key: str) -> None:
        """The cache answered `key`: the earlier call that paid for it, if any, is
        charged now."""
        replay = self._replays.get(key)
        if replay:
            self.meter.charge_earlier(replay.pop(0))


class Replaying(Wrapper):
    """Above the cache: each reply it replays charges the earlier call that paid for it."""

    def __init__(self, inner: LLMClient, earlier: Earlier) -> None:
        super().__init__(inner)
        self.earlier = earlier

    async def complete(self, request: Request) -> Completion:
        done = await self.inner.complete(request)
        if done.cache_hit:
            self.earlier.replayed(self.key_of(request))
        return done
