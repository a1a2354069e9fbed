"""Building the session's LLM client from settings (CLI entry point only)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.llm.base import LLMClient
from dagmca.llm.local import LOCAL_MODEL_NAME, SLOT_CONTEXT, LocalModelServer
from dagmca.llm.prices import resolve_prices
from dagmca.llm.tokens import ASSUMED_WINDOW, ContextWindow, known_window


@dataclass
class Backend:
    client: LLMClient
    model: str
    server: LocalModelServer | None = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def check_backend(cfg: SessionConfig) -> None:
    """What can be checked about the backend settings without starting anything."""
    if cfg.llm == "openai":
        _check_endpoint(cfg)
    resolve_prices(cfg, model_name(cfg))


def model_name(cfg: SessionConfig) -> str:
    """The model the backend will run: --model, else the backend's default."""
    if cfg.model or cfg.llm == "openai":
        return cfg.model
    return LOCAL_MODEL_NAME if cfg.llm == "local" else "scripted"


def _check_endpoint(cfg: SessionConfig) -> None:
    if not os.environ.get("OPENAI_API_KEY") and not (cfg.base_url or os.environ.get("OPENAI_BASE_URL")):
        raise UserError(
            "--llm openai needs OPENAI_API_KEY (or --base-url for a local endpoint)",
            "set it in the environment",
        )
    if not cfg.model:
        raise UserError("--llm openai needs a model name", "pass --model, e.g. --model gpt-4o-mini")


def open_backend(cfg: SessionConfig) -> Backend:
    if cfg.llm == "fake":
        from dagmca.llm.fake import ScriptedLLM

        return Backend(ScriptedLLM(model=model_name(cfg)), model_name(cfg))

    from openai import AsyncOpenAI

    from dagmca.llm.openai_backend import OpenAIBackend
    from dagmca.llm.retry import RetryPolicy
    from dagmca.llm.structured import StructuredMode

    policy = RetryPolicy(attempts=cfg.max_retries + 1)

    if cfg.llm == "local":
        server = LocalModelServer(parallel=cfg.concurrency, seed=cfg.seed).start()
        # max_retries=0: retries are OpenAIBackend's, counted and with Retry-After.
        client = AsyncOpenAI(
            base_url=server.base_url, api_key="local", timeout=cfg.request_timeout_s, max_retries=0
        )
        model = model_name(cfg)
        # llama.cpp turns a whole json_schema into a grammar: no negotiation needed
        local = OpenAIBackend(client, model, policy=policy, seed=cfg.seed, structured=StructuredMode.SCHEMA)
        return Backend(local, model, server)

    check_backend(cfg)
    base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = os.environ.get("OPENAI_API_KEY")
    client = AsyncOpenAI(
        base_url=base_url, api_key=api_key or "not-needed", timeout=cfg.request_timeout_s, max_retries=0
    )
    backend = OpenAIBackend(
        client, cfg.model, policy=policy, seed=cfg.seed, reasoning_effort=cfg.reasoning_effort
    )
    return Backend(backend, cfg.model)


def context_window(cfg: SessionConfig, client: LLMClient) -> ContextWindow:
    """The model's context window: --context-window, else the local server's slot, else
    what the endpoint reported, else a known model's, else assumed (and said so)."""
    if cfg.context_window is not None:
        return ContextWindow(cfg.context_window, "--context-window setting")
    if cfg.llm == "local":
        return ContextWindow(SLOT_CONTEXT, "local server's slot context")
    if client.reported_context_window:
        return ContextWindow(client.reported_context_window, "endpoint's model list")
    known = known_window(client.model)
    if known is not None:
        return ContextWindow(known, f"table of known models ({client.model})")
    return ContextWindow(ASSUMED_WINDOW, "assumed")
