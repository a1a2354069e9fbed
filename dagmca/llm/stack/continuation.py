"""Replies cut at their output cap: continued once, or marked; never stored as if whole."""

from __future__ import annotations

from dataclasses import replace

from dagmca.llm.base import Completion, LLMClient, LLMError, Message, Request
from dagmca.llm.degenerate import loop_reason
from dagmca.llm.stack.base import Wrapper

CUT_MARK = " […]"


class Continuation(Wrapper):
    """A plain reply its output cap cut short (finish reason `length`) is continued once,
    one more request below this layer, unless it was looping, which more of would not
    mend; a reply still cut ends with a visible mark and the fault `cut_at_cap`.
    `continue_cut` off (the local model, whose calls stay what the protocol's formula
    says): marked at once, not continued. Structured replies are the backend's to
    repair, not this layer's."""

    def __init__(self, inner: LLMClient, *, continue_cut: bool = True) -> None:
        super().__init__(inner)
        self.continue_cut = continue_cut

    async def complete(self, request: Request) -> Completion:
        result = await self.inner.complete(request)
        if request.schema is not None or result.finish_reason != "length":
            return result
        if not self.continue_cut:
            return result.model_copy(
                update={"text": result.text.rstrip() + CUT_MARK, "faults": [*result.faults, "cut_at_cap"]}
            )
        return await self._continued(result, request)

    async def _continued(self, result: Completion, request: Request) -> Completion:
        text, usage, finish, faults = result.text, result.usage, result.finish_reason, list(result.faults)
        retries = result.retries
        if loop_reason(text) is None:
            cap = max(32, request.max_tokens // 2)
            follow: list[Message] = [
                *request.messages,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": "Your reply was cut off at the length limit. Continue it exactly where it "
                    "stopped, without repeating anything or starting over, and finish within "
                    f"{max(10, int(cap * 0.6))} words.",
                },
            ]
            try:
                more = await self.inner.complete(replace(request, messages=follow, max_tokens=cap))
            except LLMError as exc:  # the reply stands, marked; what the try met is counted
                more = None
                retries, faults = retries + exc.retries, [*faults, *exc.faults]
            if more is not None:
                retries, faults = retries + more.retries, [*faults, *more.faults]
            rest = more.text.rstrip() if more is not None else ""
            if more is not None and rest.strip():
                joiner = "" if text[-1:].isspace() or rest[:1].isspace() or rest[:1] in ",.;:" else " "
                text, usage, finish = text + joiner + rest, usage + more.usage, more.finish_reason
        if finish == "length":
            text, faults = text.rstrip() + CUT_MARK, [*faults, "cut_at_cap"]
        return result.model_copy(
            update={
                "text": text,
                "usage": usage,
                "finish_reason": finish,
                "faults": faults,
                "retries": retries,
            }
        )
