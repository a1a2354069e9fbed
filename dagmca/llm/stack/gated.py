"""The concurrency limit as a layer: every request below it passes the gate."""

from __future__ import annotations

from dagmca.llm.base import Completion, LLMClient, Request
from dagmca.llm.gate import Gate
from dagmca.llm.stack.base import Wrapper


class Gated(Wrapper):
    """At most the gate's slots of calls in flight below it, let in by rank (llm/gate.py).
    One gate is shared by every role of a session, and by a build's sessions: the limit
    is the endpoint's and the machine's, not one stack's."""

    def __init__(self, inner: LLMClient, gate: Gate) -> None:
        super().__init__(inner)
        self.gate = gate

    async def complete(self, request: Request) -> Completion:
        async with self.gate:
            return await self.inner.complete(request)
