"""The `openai` backend: the official client against any OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import time
from typing import Any

import jiter
import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ValidationError

from dagmca.errors import EndpointError
from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Message, Usage


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True},
    }


class OpenAIBackend(LLMClient):
    """Takes a ready `AsyncOpenAI` client, so callers and tests can hand one in."""

    def __init__(self, client: AsyncOpenAI, model: str) -> None:
        self.client = client
        self.model = model

    async def ping(self) -> None:
        try:
            models = await self.client.models.list()
        except openai.AuthenticationError as exc:
            raise EndpointError(
                f"the LLM endpoint {self.client.base_url} refused the API key",
                "check OPENAI_API_KEY",
            ) from exc
        except openai.APIError as exc:
            raise EndpointError(
                f"the LLM endpoint {self.client.base_url} is not usable: {type(exc).__name__}",
                "check --base-url and that the server is running",
            ) from exc
        ids = [m.id for m in models.data]
        if ids and self.model not in ids and not any(i.endswith(self.model) for i in ids):
            shown = ", ".join(ids[:5])
            raise EndpointError(
                f"model {self.model!r} is not served by {self.client.base_url} (it has: {shown})",
                "pick one with --model",
            )

    async def _create(self, messages: list[Message], kwargs: dict[str, Any]) -> tuple[str, str, Usage]:
        try:
            resp = await self.client.chat.completions.create(messages=messages, **kwargs)  # type: ignore[arg-type]
        except openai.APIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from exc
        if not resp.choices:
            raise LLMError("the endpoint returned no choices")
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
        text, finish, usage = await self._create(messages, kwargs)
        if schema is None:
            return Completion(
                text=text.strip(),
                usage=usage,
                latency_s=time.monotonic() - start,
                finish_reason=finish,
            )
        parsed, repair_usage = await self._structured(schema, messages, kwargs, text, finish)
        return Completion(
            text=json.dumps(parsed.model_dump(mode="json")),
            parsed=parsed,
            usage=usage + (repair_usage or Usage()),
            latency_s=time.monotonic() - start,
            finish_reason=finish,
            repaired=repair_usage is not None,
        )

    async def _structured(
        self,
        schema: type[BaseModel],
        messages: list[Message],
        kwargs: dict[str, Any],
        text: str,
        finish: str,
    ) -> tuple[BaseModel, Usage | None]:
        """The validated reply, and what repairing it cost (None: it was valid)."""
        try:
            return schema.model_validate_json(text), None
        except ValidationError as first:
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
            text, _, more = await self._create(repair, kwargs)
            try:
                return schema.model_validate_json(text), more
            except ValidationError as second:
                raise LLMError(f"invalid structured output after repair: {_short_error(second)}") from second

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
