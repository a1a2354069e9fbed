"""The response cache as a layer: a request seen before is answered without a call."""

from __future__ import annotations

from dagmca.llm.base import Completion, LLMClient, Request
from dagmca.llm.cache import ResponseCache, decode, encode
from dagmca.llm.stack.base import Wrapper


class Cached(Wrapper):
    """A hit is answered before the layers below (no gate to wait at, no budget to
    meet: a replayed run replays even what a budget would now refuse), marked
    `cache_hit`. Every successful reply is kept, whether or not the cache is read
    (`read` off), so a run started without reading it can still be resumed.

    The pre-flight's structured-output mode is remembered the same way: a mode an
    earlier run negotiated with the same endpoint and model is taken, not asked again."""

    def __init__(self, inner: LLMClient, cache: ResponseCache, *, read: bool = True) -> None:
        super().__init__(inner)
        self.cache = cache
        self.read = read

    async def complete(self, request: Request) -> Completion:
        key = self.key_of(request)
        if self.read:
            raw = await self.cache.acache_get(key)
            hit = decode(raw, request.schema) if raw is not None else None
            if hit is not None:
                return hit
        result = await self.inner.complete(request)
        self.cache.cache_put(key, self.model, encode(result))
        return result

    async def ping(self) -> None:
        key = self.inner.negotiated_key()
        remembered = await self.cache.acache_get(key) if key and self.read else None
        if remembered:
            self.inner.use_structured_mode(remembered)
        await self.inner.ping()
        settled = self.inner.negotiation_result()
        if key and settled:
            self.cache.cache_put(key, self.model, settled)
