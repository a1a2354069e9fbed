"""Tracing as a layer: one span per call accounted below it, when the run is traced."""

from __future__ import annotations

import time

from dagmca import tracing
from dagmca.llm.base import Completion, LLMClient, LLMError, Request, Usage
from dagmca.llm.prices import Prices
from dagmca.llm.stack.base import PREFLIGHT, BudgetExhausted, Wrapper


class Traced(Wrapper):
    """Just outside accounting, so its spans are the calls the records are: a reply
    from the cache (a hit, no tokens), a reply, a failure; not a refusal for a budget
    (no call was made). The span covers the wait for a slot too, which is where a
    slow session's time often goes; `dagmca.latency_s` is the request's own. Untraced,
    a call costs one context-variable read more."""

    def __init__(self, inner: LLMClient, *, prices: Prices | None = None, role: str = "") -> None:
        super().__init__(inner)
        self.prices = prices or Prices()
        self.role = role

    async def complete(self, request: Request) -> Completion:
        if not tracing.active():
            return await self.inner.complete(request)
        start = time.time_ns()
        try:
            done = await self.inner.complete(request)
        except BudgetExhausted:
            raise
        except LLMError as exc:
            tracing.call(self._call(request, start, exc))
            raise
        tracing.call(self._call(request, start, done))
        return done

    def _call(self, request: Request, start: int, outcome: Completion | LLMError) -> tracing.Call:
        """The Call of a call that has just ended, answered or failed: built on every
        call of a traced run, once."""
        end = time.time_ns()
        meta, max_tokens, temperature = request.meta, request.max_tokens, request.temperature
        structured, messages = request.schema is not None, request.messages
        if isinstance(outcome, LLMError):
            return tracing.Call(
                self.model, self.role, meta.agent, meta.debate, meta.phase, start, end, messages,
                max_tokens=max_tokens, temperature=temperature, structured=structured, reask=meta.reask,
                retries=outcome.retries, faults=tuple(outcome.faults), error=type(outcome).__name__,
            )  # fmt: skip
        u = outcome.usage
        return tracing.Call(
            self.model, self.role, meta.agent, meta.debate, meta.phase, start, end, messages,
            max_tokens=max_tokens, temperature=temperature, structured=structured, reask=meta.reask,
            retries=outcome.retries, faults=tuple(outcome.faults), reply=outcome.text,
            input_tokens=u.prompt_tokens, output_tokens=u.completion_tokens,
            finish_reason=outcome.finish_reason, cache_hit=outcome.cache_hit, latency_s=outcome.latency_s,
            repaired=outcome.repaired, cost_usd=0.0 if outcome.cache_hit else round(self.prices.cost(u), 8),
        )  # fmt: skip

    async def ping(self) -> None:
        """The pre-flight below; each request it made is a call span over its time (the
        requests are not timed one by one), so a trace's tokens are the run's."""
        start = time.time_ns()
        await self.inner.ping()
        if not tracing.active():
            return
        end = time.time_ns()
        for req in self.inner.preflight_calls():
            usage: Usage = req.usage
            tracing.call(
                tracing.Call(
                    model=self.model,
                    role=self.role,
                    agent=PREFLIGHT,
                    debate="",
                    phase="negotiate",
                    start_ns=start,
                    end_ns=end,
                    input_tokens=usage.prompt_tokens,
                    output_tokens=usage.completion_tokens,
                    retries=req.retries,
                    faults=tuple(req.faults),
                    cost_usd=round(self.prices.cost(usage), 8),
                    error="PreflightError" if req.error else "",
                )
            )
