"""Building the session's LLM client from settings (CLI entry point only)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.llm.base import LLMClient
from dagmca.llm.gguf import GGUFInfo, read_gguf
from dagmca.llm.local import (
    LOCAL_SAMPLING,
    SLOT_CONTEXT,
    LocalModelServer,
    model_file,
    served_name,
    slot_context,
)
from dagmca.llm.prices import resolve_prices
from dagmca.llm.tokens import ASSUMED_WINDOW, ContextWindow, known_window


@dataclass
class Backend:
    client: LLMClient
    model: str
    server: LocalModelServer | None = None
    gguf: GGUFInfo | None = None  # the local backend's model file

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def check_backend(cfg: SessionConfig) -> None:
    """What can be checked about the backend settings without starting anything."""
    if cfg.llm == "openai":
        _check_endpoint(cfg)
    if cfg.llm == "local":
        read_gguf(model_file(cfg.local_model))  # a missing or broken model file, in one line
    resolve_prices(cfg, model_name(cfg))


def model_name(cfg: SessionConfig) -> str:
    """The model the backend will run: --model, else the backend's default."""
    if cfg.model or cfg.llm == "openai":
        return cfg.model
    return served_name(cfg.local_model) if cfg.llm == "local" else "scripted"


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

    from dagmca.llm.openai_backend import OpenAIBackend
    from dagmca.llm.retry import RetryPolicy
    from dagmca.llm.structured import StructuredMode
    from dagmca.llm.wire import make_client

    policy = RetryPolicy(attempts=cfg.max_retries + 1)

    if cfg.llm == "local":
        path = model_file(cfg.local_model)
        gguf = read_gguf(path)  # a file that is not a model fails here, in one line
        context = slot_context(cfg.local_model, gguf.context_length, cfg.context_window)
        server = LocalModelServer(
            parallel=local_slots(cfg.concurrency),
            seed=cfg.seed,
            model=path,
            name=model_name(cfg),
            context=context,
        ).start()
        client = make_client(server.base_url, "local", cfg.request_timeout_s)
        model = model_name(cfg)
        # llama.cpp turns a whole json_schema into a grammar: no negotiation needed
        sampling = cfg.sampling_params()
        local = OpenAIBackend(
            client,
            model,
            policy=policy,
            seed=cfg.seed,
            structured=StructuredMode.SCHEMA,
            sampling=LOCAL_SAMPLING if sampling is None else sampling,
        )
        local.reported_context_window = context
        return Backend(local, model, server, gguf)

    check_backend(cfg)
    from dagmca.llm.limiter import RateLimiter

    base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = os.environ.get("OPENAI_API_KEY")
    client = make_client(base_url, api_key or "not-needed", cfg.request_timeout_s)
    backend = OpenAIBackend(
        client,
        cfg.model,
        policy=policy,
        seed=cfg.seed,
        reasoning_effort=cfg.reasoning_effort,
        sampling=cfg.sampling_params(),
        limiter=RateLimiter(cfg.rpm, cfg.tpm),
    )
    return Backend(backend, cfg.model)


def local_slots(concurrency: int) -> int:
    """Parallel slots for the embedded server: as many as the session has calls in flight,
    up to the cores present. Measured on 2 cores: three concurrent streams write 127
    tokens/s in all against 113 for one, and long prompts run at the same 36-38 tokens/s
    on 1, 2 or 4 slots; fewer slots keep the KV cache small (README, "The local model's
    speed")."""
    return max(1, min(concurrency, len(os.sched_getaffinity(0))))


def context_window(cfg: SessionConfig, client: LLMClient) -> ContextWindow:
    """The model's context window: --context-window, else the local server's slot, else
    what the endpoint reported, else a known model's, else assumed (and said so)."""
    if cfg.llm == "local":  # the slot the server was started with (--context-window sized it)
        return ContextWindow(client.reported_context_window or SLOT_CONTEXT, "local server's slot context")
    if cfg.context_window is not None:
        return ContextWindow(cfg.context_window, "--context-window setting")
    if client.reported_context_window:
        return ContextWindow(client.reported_context_window, "endpoint's model list")
    known = known_window(client.model)
    if known is not None:
        return ContextWindow(known, f"table of known models ({client.model})")
    return ContextWindow(ASSUMED_WINDOW, "assumed")
