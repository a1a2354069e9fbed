"""The response cache's side of a call: what a reply is keyed on, and how a reply is
kept and read back (a repeated request is answered without a call)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from dagmca.llm.base import Completion, Message, Usage


class ResponseCache(Protocol):
    """Where replies are kept. Reading is awaited (it must not block the event loop);
    keeping is queued."""

    async def acache_get(self, key: str) -> str | None: ...
    def cache_put(self, key: str, model: str, value: str) -> None: ...


def cache_key(
    model: str,
    messages: list[Message],
    schema: dict[str, Any] | None,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    sampling: dict[str, float] | None = None,
) -> str:
    """What determines a reply: model, messages and output schema as the backend sends
    them, and the sampling parameters. Who asks (agent, debate) does not: the same
    question gets the same answer."""
    request = {
        "model": model,
        "messages": messages,
        "schema": schema,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
    }
    if sampling:  # left out when empty, so keys made before it existed still match
        request["sampling"] = dict(sorted(sampling.items()))
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def encode(done: Completion) -> str:
    return json.dumps(
        {
            "text": done.text,
            "finish_reason": done.finish_reason,
            "repaired": done.repaired,
            "usage": done.usage.model_dump(),
        },
        ensure_ascii=False,
    )


def decode(raw: str, schema: type[BaseModel] | None) -> Completion | None:
    """A cached reply, or None when it no longer fits (a changed schema): a miss."""
    try:
        data: dict[str, Any] = json.loads(raw)
        parsed = schema.model_validate_json(data["text"]) if schema is not None else None
        return Completion(
            text=data["text"],
            parsed=parsed,
            usage=Usage.model_validate(data["usage"]),
            finish_reason=data.get("finish_reason", ""),
            repaired=bool(data.get("repaired", False)),
            cache_hit=True,
        )
    except (ValueError, KeyError, TypeError, ValidationError):
        return None
