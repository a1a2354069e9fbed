"""One chat completion over the `openai` client: the client dagmca builds, the body it
posts, and the reply read back (the backend's retries and accounting sit around it)."""

from __future__ import annotations

import json
import ssl
import weakref
from collections.abc import Mapping
from typing import Any

import aiohttp
import httpx2
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient

# the SDK's own mapping of aiohttp's errors to httpx2's, so a failure has the same causes
from openai._vendor.httpx_aiohttp.transport import map_aiohttp_exceptions

from dagmca.llm import retry as r
from dagmca.llm.base import Message, Usage
from dagmca.llm.retry import RetryableFault

# What `chat.completions.create` asks of the client: the bearer key.
_AUTH: Any = {"security": {"bearer_auth": True}}


def make_client(base_url: str | None, api_key: str, timeout_s: float) -> AsyncOpenAI:
    """The client dagmca builds for an endpoint. Retries are OpenAIBackend's (counted,
    with Retry-After), so the client makes none. Its HTTP transport is aiohttp, the SDK's
    documented choice for many concurrent calls: the default httpx stack spent 3.4 ms
    of the event loop's time per request here, aiohttp 2.3 (README, "Scale")."""
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout_s,
        max_retries=0,
        http_client=DefaultAioHttpClient(),
    )
    if not client._client._mounts:  # a proxy (HTTP(S)_PROXY, ALL_PROXY) is the SDK's to use
        _DIRECT[client] = _Direct(str(client.base_url), client.default_headers, api_key, timeout_s)
    return client


class _Direct:
    """A chat body posted straight over the aiohttp session of a client dagmca built,
    past the SDK's request machinery (its options, URL and header objects, a fresh
    idempotency key): on a session of thousands of calls that machinery was the largest
    share of the event loop's time. A client whose requests go through a proxy keeps the
    SDK's path, which routes them. The session is the SDK transport's own, so the
    client's close closes it. Failures are raised as the SDK raises them (status
    errors by the client's own mapping, timeouts and dropped connections as
    `APITimeoutError` and `APIConnectionError` over the transport's cause), so retries
    classify them alike."""

    def __init__(self, base_url: str, headers: Mapping[str, object], api_key: str, timeout_s: float) -> None:
        # no reference to the client: it is the key this is kept under, weakly
        self.url = base_url.rstrip("/") + "/chat/completions"
        sent = {k: v for k, v in headers.items() if isinstance(v, str)}  # the SDK's Omit left out
        self.headers = sent | {"Authorization": f"Bearer {api_key}"}
        self.timeout = aiohttp.ClientTimeout(sock_connect=timeout_s, sock_read=timeout_s, connect=timeout_s)

    @staticmethod
    def session(client: AsyncOpenAI) -> aiohttp.ClientSession | None:
        """The SDK transport's aiohttp session, made now if no request made it yet; None
        when the client's transport is not the SDK's aiohttp one."""
        transport = getattr(getattr(client, "_client", None), "_transport", None)
        if transport is None or not hasattr(transport, "get_client"):
            return None
        if not isinstance(transport.client, aiohttp.ClientSession):
            transport.client = transport.get_client()
        return transport.client if isinstance(transport.client, aiohttp.ClientSession) else None

    async def post(self, client: AsyncOpenAI, session: aiohttp.ClientSession, body: dict[str, Any]) -> bytes:
        try:
            with map_aiohttp_exceptions():
                async with session.post(  # a redirect is followed, as the SDK follows it
                    self.url, data=json.dumps(body).encode(), headers=self.headers, timeout=self.timeout
                ) as response:
                    raw = await response.read()
                    status, headers = response.status, response.raw_headers
        except httpx2.TimeoutException as exc:
            raise openai.APITimeoutError(request=self._request()) from exc
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        if status >= 400:
            failed = httpx2.Response(status, headers=headers, content=raw, request=self._request())
            raise client._make_status_error_from_response(failed)
        return raw

    def _request(self) -> httpx2.Request:
        return httpx2.Request("POST", self.url)


# the clients dagmca built, each with its direct path (a handed-in client keeps the SDK's)
_DIRECT: weakref.WeakKeyDictionary[AsyncOpenAI, _Direct] = weakref.WeakKeyDictionary()


async def post_chat(
    client: AsyncOpenAI, messages: list[Message], kwargs: dict[str, Any]
) -> tuple[str, str, Usage]:
    """One try: the reply's text, finish reason and usage. Status errors are the
    client's (`openai.APIStatusError` and kin); a body that is not a completion is a
    `RetryableFault`.

    Posted as it is, not through `chat.completions.create`: that walks the body against
    its typed schema, field by field, and on a session of thousands of calls this was a
    tenth of the event loop's time; our body is plain JSON already. The reply is read
    the same way, as bytes: the SDK's typed model of it cost a tenth of a millisecond a
    call, for the three fields we use."""
    body = {k: v for k, v in kwargs.items() if k != "extra_body"} | kwargs.get("extra_body", {})
    body["messages"] = messages
    direct = _DIRECT.get(client)
    session = _Direct.session(client) if direct is not None else None
    if direct is not None and session is not None:
        raw = await direct.post(client, session, body)
    else:
        raw = await client.post("/chat/completions", body=body, cast_to=bytes, options=_AUTH)
    return read_completion(raw)


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
