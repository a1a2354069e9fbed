"""Accounting: every call on the session's meter and in its call log, one record each,
replies from the cache and failed calls included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagmca.graph import CallRecord
from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Request
from dagmca.llm.prices import Prices
from dagmca.llm.stack.base import PREFLIGHT, BudgetExhausted, Wrapper
from dagmca.llm.stack.meter import Meter

Record = Callable[[CallRecord], None]


class Accounting(Wrapper):
    """How each call below it ended, on the meter (which every role of the session
    shares) and as a CallRecord handed to `record`: a reply from the cache (costing
    nothing), a reply (tokens, retries, faults, repairs, cost at `prices`), a failure
    (its retries and faults, the error), a refusal for a budget (counted, not recorded:
    no call was made). Records carry the `role` and the model that served the call.
    The pre-flight's requests are accounted when it ends."""

    def __init__(
        self,
        inner: LLMClient,
        meter: Meter,
        *,
        prices: Prices | None = None,
        record: Record | None = None,
        session: str = "",
        role: str = "",
    ) -> None:
        super().__init__(inner)
        self.meter = meter
        self.prices = prices or Prices()
        self.record = record
        self.session = session
        self.role = role

    async def complete(self, request: Request) -> Completion:
        if not request.meta.key:  # made once here, for the cache and the replays below
            request = request.with_meta(key=self.key(request))
        meta = request.meta
        try:
            done = await self.inner.complete(request)
        except BudgetExhausted:
            self.meter.refused += 1
            raise
        except LLMError as exc:
            self._failed(meta, meta.key, exc)
            raise
        m, share = self.meter, self.meter.of(self.role, self.model)
        if done.cache_hit:
            m.cache_hits += 1
            share.cache_hits += 1
        else:
            cost = self.prices.cost(done.usage)
            m.usage = m.usage + done.usage
            m.cost_usd += cost
            m.repairs += int(done.repaired)
            m.retries += done.retries
            m.faults.update(done.faults)
            share.usage = share.usage + done.usage
            share.cost_usd += cost
        u = done.usage
        self._emit(
            meta,
            meta.key,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            latency_s=round(done.latency_s, 4),
            cache_hit=done.cache_hit,
            retries=done.retries,
            faults=list(done.faults),
            repaired=done.repaired,
            cost_usd=0.0 if done.cache_hit else round(self.prices.cost(u), 8),
        )
        return done

    def _failed(self, meta: CallMeta, key: str, exc: LLMError) -> None:
        m = self.meter
        m.failures += 1
        m.retries += exc.retries
        m.faults.update(exc.faults)
        # the endpoint answered, just not in the shape asked for
        m.invalid_outputs += int(exc.invalid_output)
        self.meter.of(self.role, self.model).failures += 1
        self._emit(meta, key, retries=exc.retries, faults=exc.faults, error=str(exc)[:500])

    async def ping(self) -> None:
        """The pre-flight below, then what its requests cost, accounted as calls (its
        share kept apart: budgets leave each run's fixed overhead out)."""
        await self.inner.ping()
        m, share = self.meter, self.meter.of(self.role, self.model)
        for call in self.inner.preflight_calls():
            cost = self.prices.cost(call.usage)
            m.calls += 1
            m.usage = m.usage + call.usage
            m.cost_usd += cost
            m.preflight_calls += 1
            m.preflight_tokens += call.usage.total
            m.preflight_cost_usd += cost
            m.retries += call.retries
            m.faults.update(call.faults)
            share.calls += 1
            share.usage = share.usage + call.usage
            share.cost_usd += cost
            u = call.usage
            self._emit(
                CallMeta(agent=PREFLIGHT, phase="negotiate"),
                "",
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                retries=call.retries,
                faults=list(call.faults),
                error=call.error,
                cost_usd=round(cost, 8),
            )

    def _emit(self, meta: CallMeta, key: str, **fields: Any) -> None:
        if self.record is None:
            return
        self.record(
            CallRecord(
                session=self.session,
                agent=meta.agent,
                debate=meta.debate,
                phase=meta.phase,
                omitted_chars=meta.omitted_chars,
                reask=meta.reask,
                model=self.model,
                role=self.role,
                key=key,
                **fields,
            )
        )


class CountRequests(Wrapper):
    """Counts each request on the meter as it is sent, below the gate and the budget and
    below the continuation (whose extra request is one more): the budgets see the calls
    in flight, not only the finished ones."""

    def __init__(self, inner: LLMClient, meter: Meter, *, role: str = "") -> None:
        super().__init__(inner)
        self.meter = meter
        self.role = role

    async def complete(self, request: Request) -> Completion:
        self.meter.calls += 1
        self.meter.of(self.role, self.model).calls += 1
        return await self.inner.complete(request)
