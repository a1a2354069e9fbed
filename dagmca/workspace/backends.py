"""The LLM backends a workspace's sessions use: one per distinct backend settings,
started on first use and stopped when the workspace closes, so that sessions at once
share one local model server or one endpoint's rate limiter. A client the caller hands
in is wrapped, never closed: it is the caller's."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dagmca.config import SessionConfig
from dagmca.llm.base import LLMClient
from dagmca.llm.factory import Backend, open_backend

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    ClientLike = LLMClient | AsyncOpenAI
else:
    ClientLike = Any

# the settings a backend is started from: two sessions that agree on these share one
BACKEND_SETTINGS = frozenset(
    {
        "llm",
        "model",
        "base_url",
        "local_model",
        "seed",
        "concurrency",
        "sampling",
        "reasoning_effort",
        "rpm",
        "tpm",
        "request_timeout_s",
        "max_retries",
        "context_window",
        "roles",
    }
)


def backend_key(cfg: SessionConfig) -> str:
    return json.dumps(cfg.model_dump(mode="json", include=set(BACKEND_SETTINGS)), sort_keys=True)


@dataclass
class Handed:
    """A client the caller handed in, as the session's backend."""

    client: LLMClient
    model: str


def wrap_client(cfg: SessionConfig, client: ClientLike) -> Handed:
    """An `LLMClient` as it is; an `openai.AsyncOpenAI` client behind dagmca's OpenAI
    backend (its retries, structured-output negotiation and accounting), with the
    settings' model. Give the openai client `max_retries=0`: dagmca retries itself."""
    if isinstance(client, LLMClient):
        return Handed(client, cfg.model or client.model)
    from openai import AsyncOpenAI

    from dagmca.errors import UserError
    from dagmca.llm.limiter import RateLimiter
    from dagmca.llm.openai_backend import OpenAIBackend
    from dagmca.llm.retry import RetryPolicy

    if not isinstance(client, AsyncOpenAI):
        raise UserError(
            f"client must be an openai.AsyncOpenAI or a dagmca LLMClient, not {type(client).__name__}",
            "pass one of those, or none to use the settings' backend",
        )
    if not cfg.model:
        raise UserError("an openai client needs a model name", "pass model=... in the settings")
    backend = OpenAIBackend(
        client,
        cfg.model,
        policy=RetryPolicy(attempts=cfg.max_retries + 1),
        seed=cfg.seed,
        reasoning_effort=cfg.reasoning_effort,
        sampling=cfg.sampling_params(),
        limiter=RateLimiter(cfg.rpm, cfg.tpm),
    )
    return Handed(backend, cfg.model)


class Backends:
    def __init__(self) -> None:
        self._open: dict[str, Backend] = {}
        self._starting: dict[str, asyncio.Lock] = {}

    async def get(self, cfg: SessionConfig, client: ClientLike | None = None) -> Backend | Handed:
        if client is not None:
            return wrap_client(cfg, client)
        key = backend_key(cfg)
        lock = self._starting.setdefault(key, asyncio.Lock())
        async with lock:  # two sessions asking at once start one backend
            if key not in self._open:
                # starting a local model server waits for it to load: off the loop
                self._open[key] = await asyncio.to_thread(open_backend, cfg)
            return self._open[key]

    async def aclose(self) -> None:
        backends, self._open = list(self._open.values()), {}
        for backend in backends:
            try:
                await backend.client.aclose()
            finally:
                backend.stop()
