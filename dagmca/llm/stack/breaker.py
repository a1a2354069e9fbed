"""The judgement that the endpoint is down: calls failing in a row, not here and there."""

from __future__ import annotations

from dagmca.llm.base import Completion, EndpointDown, LLMClient, LLMError, Request
from dagmca.llm.stack.base import BudgetExhausted, Wrapper


class Breaker:
    """Failed calls in a row, each after its retries, across every stack that shares
    it: after `down_after` of them the run stops (resumably) instead of degrading
    further. A call that went through starts the count again."""

    def __init__(self, down_after: int = 8) -> None:
        self.down_after = down_after
        self.in_a_row = 0

    def failed(self, exc: LLMError) -> None:
        self.in_a_row += 1
        if self.in_a_row >= self.down_after:
            raise EndpointDown(
                f"the LLM endpoint failed {self.in_a_row} calls in a row, each after its retries "
                f"(last: {str(exc)[:200]})"
            )

    def went_through(self) -> None:
        self.in_a_row = 0


class Breaking(Wrapper):
    """Tells the breaker how each call below it ended. Not failures: a call the endpoint
    answered without valid structured output (it is up, just not in the shape asked
    for), a refusal for a budget (no request was made), a reply from the cache (no
    request either, so it says nothing of the endpoint)."""

    def __init__(self, inner: LLMClient, breaker: Breaker) -> None:
        super().__init__(inner)
        self.breaker = breaker

    async def complete(self, request: Request) -> Completion:
        try:
            result = await self.inner.complete(request)
        except BudgetExhausted:
            raise
        except LLMError as exc:
            if not exc.invalid_output:
                self.breaker.failed(exc)
            raise
        if not result.cache_hit:
            self.breaker.went_through()
        return result
