"""The `openai` backend: the official client against any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

import jiter
import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ValidationError

from dagmca.errors import EndpointError
from dagmca.llm import retry as r
from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Message, Usage
from dagmca.llm.retry import RetryableFault, RetryPolicy


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True},
    }


@dataclass
class _Trace:
    """What one logical call went through: retries and faults, by kind."""

    retries: int = 0
    faults: list[str] = field(default_factory=list)


class OpenAIBackend(LLMClient):
    """Takes a ready `AsyncOpenAI` client, so callers and tests can hand one in.

    Retries are ours, not the client's (build the client with max_retries=0), so that
    every fault is counted and Retry-After is honoured the same way everywhere. The
    client's timeout is the per-call timeout.
    """

    def __init__(
        self, client: AsyncOpenAI, model: str, *, policy: RetryPolicy | None = None, seed: int = 0
    ) -> None:
        self.client = client
        self.model = model
        self.policy = policy or RetryPolicy()
        self._rng = random.Random(seed)  # jitter only: never reaches a prompt or the graph
        # Error text can quote the request (a refused key is echoed back by some servers).
        self._secrets = [k for k in (client.api_key,) if k and len(k) >= 6]

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    async def ping(self) -> None:
        """Pre-flight: the endpoint answers and serves the model. A flaky endpoint gets
        two more tries, a dead one fails in about a second."""
        for attempt in range(1, 4):
            try:
                models = await self.client.with_options(timeout=10.0).models.list()
                break
            except openai.AuthenticationError:
                raise EndpointError(
                    f"the LLM endpoint {self.client.base_url} refused the API key", "check OPENAI_API_KEY"
                ) from None
            except (openai.APIError, ValueError) as exc:
                if r.classify(exc) is None or attempt == 3:
                    raise EndpointError(
                        f"the LLM endpoint {self.client.base_url} is not usable: {type(exc).__name__}",
                        "check --base-url and that the server is running",
                    ) from None
                await asyncio.sleep(0.3 * attempt)
        ids = [m.id for m in models.data]
        if ids and self.model not in ids and not any(i.endswith(self.model) for i in ids):
            shown = ", ".join(ids[:5])
            raise EndpointError(
                f"model {self.model!r} is not served by {self.client.base_url} (it has: {shown})",
                "pick one with --model",
            )

    async def _create(
        self, messages: list[Message], kwargs: dict[str, Any], trace: _Trace
    ) -> tuple[str, str, Usage]:
        """One request, tried up to `policy.attempts` times on retryable faults."""
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return await self._once(messages, kwargs)
            except (openai.APIError, RetryableFault, ValueError) as exc:
                kind = r.classify(exc)
                detail = self.redact(f"{type(exc).__name__}: {exc}")[:300]
                if kind is None:
                    raise LLMError(detail, faults=trace.faults, retries=trace.retries) from None
                trace.faults.append(kind)
                if attempt == self.policy.attempts:
                    raise LLMError(
                        f"gave up after {attempt} tries: {detail}", faults=trace.faults, retries=trace.retries
                    ) from None
                trace.retries += 1
                await asyncio.sleep(self.policy.delay(attempt, r.retry_after(exc), self._rng))
        raise AssertionError("unreachable")

    async def _once(self, messages: list[Message], kwargs: dict[str, Any]) -> tuple[str, str, Usage]:
        resp = await self.client.chat.completions.create(messages=messages, **kwargs)  # type: ignore[arg-type]
        if isinstance(resp, str) or not hasattr(resp, "choices"):  # a body the client could not parse
            raise RetryableFault(r.MALFORMED, "the endpoint returned a body that is not a completion")
        if not resp.choices:
            raise RetryableFault(r.EMPTY, "the endpoint returned no choices")
        choice = resp.choices[0]
        usage = Usage()
        if resp.usage is not None:
            details = resp.usage.prompt_tokens_details
            usage = Usage(
                prompt_tokens=resp.usage.prompt_tokens,
                completion_tokens=resp.usage.completion_tokens,
                cached_tokens=(details.cached_tokens or 0) if details else 0,
            )
        return choice.message.content or "", choice.finish_reason or "", usage

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
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if seed is not None:
            kwargs["seed"] = seed
        if schema is not None:
            kwargs["response_format"] = response_format(schema)
        start = time.monotonic()
        trace = _Trace()
        text, finish, usage = await self._create(messages, kwargs, trace)
        if schema is None:
            return Completion(
                text=text.strip(),
                usage=usage,
                latency_s=time.monotonic() - start,
                finish_reason=finish,
                retries=trace.retries,
                faults=trace.faults,
            )
        parsed, repair_usage = await self._structured(schema, messages, kwargs, text, finish, trace)
        return Completion(
            text=json.dumps(parsed.model_dump(mode="json")),
            parsed=parsed,
            usage=usage + (repair_usage or Usage()),
            latency_s=time.monotonic() - start,
            finish_reason=finish,
            repaired=repair_usage is not None,
            retries=trace.retries,
            faults=trace.faults,
        )

    async def _structured(
        self,
        schema: type[BaseModel],
        messages: list[Message],
        kwargs: dict[str, Any],
        text: str,
        finish: str,
        trace: _Trace,
    ) -> tuple[BaseModel, Usage | None]:
        """The validated reply, and what repairing it cost (None: it was valid)."""
        try:
            return schema.model_validate_json(text), None
        except ValidationError as first:
            trace.faults.append(r.TRUNCATED if finish == "length" else r.INVALID_JSON)
            salvaged = _salvage(schema, text) if finish == "length" else None
            if salvaged is not None:
                return salvaged, Usage()  # repaired without another call
            # One repair retry that shows the model its own error.
            repair: list[Message] = [
                *messages,
                {"role": "assistant", "content": text[:500]},
                {
                    "role": "user",
                    "content": "That reply is not valid JSON for the schema: "
                    f"{_short_error(first)}. Reply again with only the JSON object.",
                },
            ]
            text, _, more = await self._create(repair, kwargs, trace)
            try:
                return schema.model_validate_json(text), more
            except ValidationError as second:
                raise LLMError(
                    f"invalid structured output after repair: {_short_error(second)}",
                    faults=trace.faults,
                    retries=trace.retries,
                ) from second

    async def aclose(self) -> None:
        await self.client.close()


def _salvage(schema: type[BaseModel], text: str) -> BaseModel | None:
    """A reply cut off by max_tokens: parse what arrived (trailing string kept)."""
    try:
        data = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    # Text fields the cut-off never reached are empty, not missing.
    for name, prop in schema.model_json_schema().get("properties", {}).items():
        if prop.get("type") == "string" and "enum" not in prop:
            data.setdefault(name, "")
    try:
        return schema.model_validate(data)
    except ValidationError:
        return None


def _short_error(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:3])
