"""One chat completion over the `openai` client: the client dagmca builds, the body it
posts, and the reply read back (the backend's retries and accounting sit around it)."""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI, DefaultAioHttpClient

from dagmca.llm import retry as r
from dagmca.llm.base import Message, Usage
from dagmca.llm.retry import RetryableFault


def make_client(base_url: str | None, api_key: str, timeout_s: float) -> AsyncOpenAI:
    """The client dagmca builds for an endpoint. Retries are OpenAIBackend's (counted,
    with Retry-After), so the client makes none. Its HTTP client is the SDK's
    documented aiohttp one (`openai[aiohttp]`), its choice for many concurrent calls;
    proxies, redirects and TLS are the SDK's handling."""
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout_s,
        max_retries=0,
        http_client=DefaultAioHttpClient(),
    )


async def post_chat(
    client: AsyncOpenAI, messages: list[Message], kwargs: dict[str, Any]
) -> tuple[str, str, Usage]:
    """One try: the reply's text, finish reason and usage. Status errors are the
    client's (`openai.APIStatusError` and kin, whose response carries Retry-After); a
    body that is not a completion is a `RetryableFault`.

    Sent by `chat.completions.create` through `with_raw_response`: the reply is read as
    bytes, for the three fields used, rather than as the SDK's typed model of it, which
    an endpoint's extensions or omissions (a missing `usage`, a `null` content) would
    not fit alike."""
    raw = await client.chat.completions.with_raw_response.create(messages=messages, **kwargs)  # type: ignore[arg-type]
    return read_completion(raw.content)


def read_completion(raw: bytes) -> tuple[str, str, Usage]:
    """A chat-completions reply body: its first choice's text and finish reason, and the
    usage (zeros where the endpoint leaves them out)."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise RetryableFault(r.MALFORMED, "the endpoint returned a body that is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise RetryableFault(r.MALFORMED, "the endpoint returned a body that is not a completion")
    if not data["choices"]:
        raise RetryableFault(r.EMPTY, "the endpoint returned no choices")
    choice = data["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str | None):
        raise RetryableFault(r.MALFORMED, "the endpoint returned a message whose content is not text")
    finish = choice.get("finish_reason")
    return content or "", finish if isinstance(finish, str) else "", _usage(data.get("usage"))


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(cached),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
