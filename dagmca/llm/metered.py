"""Session-wide concurrency limit, accounting and budgets around any LLMClient."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Message, Usage


@dataclass
class Budget:
    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass
class Prices:
    per_1k_prompt: float = 0.0
    per_1k_completion: float = 0.0

    def cost(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.per_1k_prompt + usage.completion_tokens * self.per_1k_completion
        ) / 1000


@dataclass
class CallEvent:
    meta: CallMeta
    usage: Usage
    latency_s: float
    error: str = ""


@dataclass
class Meter:
    calls: int = 0
    failures: int = 0
    repairs: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0


class MeteredLLM(LLMClient):
    """One semaphore for the whole session: every call, nested ones included, passes it."""

    def __init__(
        self,
        inner: LLMClient,
        *,
        concurrency: int,
        budget: Budget | None = None,
        prices: Prices | None = None,
        on_call: Callable[[CallEvent], None] | None = None,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self._sem = asyncio.Semaphore(concurrency)
        self.budget = budget or Budget()
        self.prices = prices or Prices()
        self.meter = Meter()
        self.on_call = on_call

    def exhausted(self, reserve_calls: int = 0) -> bool:
        """True when starting more work would break a budget, keeping `reserve_calls`
        (e.g. the final integration) available."""
        b, m = self.budget, self.meter
        if b.max_calls is not None and m.calls + reserve_calls >= b.max_calls:
            return True
        if b.max_tokens is not None and m.usage.total >= b.max_tokens:
            return True
        return b.max_cost_usd is not None and m.cost_usd >= b.max_cost_usd

    async def complete(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        meta: CallMeta | None = None,
    ) -> Completion:
        meta = meta or CallMeta()
        async with self._sem:
            self.meter.calls += 1
            try:
                result = await self.inner.complete(
                    messages,
                    schema=schema,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    meta=meta,
                )
            except LLMError as exc:
                self.meter.failures += 1
                self._emit(CallEvent(meta, Usage(), 0.0, str(exc)))
                raise
        self.meter.usage = self.meter.usage + result.usage
        self.meter.cost_usd += self.prices.cost(result.usage)
        self.meter.repairs += int(result.repaired)
        self._emit(CallEvent(meta, result.usage, result.latency_s))
        return result

    def _emit(self, event: CallEvent) -> None:
        if self.on_call is not None:
            self.on_call(event)

    async def ping(self) -> None:
        await self.inner.ping()

    async def aclose(self) -> None:
        await self.inner.aclose()
