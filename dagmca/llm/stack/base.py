"""What every layer of the stack is: an LLMClient around an inner one, passing on what
it does not change."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dagmca.llm.base import Completion, LLMClient, LLMError, Message, PreflightCall, Request
from dagmca.llm.cache import cache_key

PREFLIGHT = "pre-flight"  # the agent of the calls that negotiate with the endpoint


class BudgetExhausted(LLMError):
    """A call refused because a budget is spent: a skipped turn, not a lost run (and not
    a sign the endpoint is failing)."""


class Wrapper(LLMClient):
    """A layer: `complete` is the layer's own; the rest is the inner client's. The model
    and the sampling are the inner client's too, so a key made at any layer is the one
    the backend's request deserves."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.model = inner.model
        self.sampling = inner.sampling

    async def complete(self, request: Request) -> Completion:
        return await self.inner.complete(request)

    def key(self, request: Request) -> str:
        """The response cache's key of a request: a pure function of it, so each layer
        that needs it (the cache, the records, the replays) derives the same one."""
        messages, schema = self.inner.wire(request.messages, request.schema)
        r = request
        return cache_key(self.model, messages, schema, r.max_tokens, r.temperature, r.seed, self.sampling)

    def key_of(self, request: Request) -> str:
        """The request's key as a layer above made it (on the call's meta), else made
        here: the same request gets the same key at every layer."""
        return request.meta.key or self.key(request)

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self.inner.wire(messages, schema)

    async def count_tokens(self, text: str) -> int | None:
        return await self.inner.count_tokens(text)

    def preflight_calls(self) -> list[PreflightCall]:
        return self.inner.preflight_calls()

    def negotiation_result(self) -> str | None:
        return self.inner.negotiation_result()

    def negotiated_key(self) -> str | None:
        return self.inner.negotiated_key()

    def use_structured_mode(self, mode: str) -> None:
        self.inner.use_structured_mode(mode)

    async def ping(self) -> None:
        await self.inner.ping()

    async def aclose(self) -> None:
        await self.inner.aclose()
