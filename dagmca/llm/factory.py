"""Building the session's LLM client from settings (CLI entry point only): one backend
per distinct settings among the roles, and a client that routes each call to its
role's backend when they are not all one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import ModelRole
from dagmca.llm.base import LLMClient
from dagmca.llm.gguf import GGUFInfo, read_gguf
from dagmca.llm.local import (
    LOCAL_SAMPLING,
    SLOT_CONTEXT,
    LocalModelServer,
    model_file,
    require_server,
    served_name,
    slot_context,
)
from dagmca.llm.prices import resolve_prices
from dagmca.llm.routing import Route, RoutingClient
from dagmca.llm.tokens import ASSUMED_WINDOW, ContextWindow, known_window

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from dagmca.llm.limiter import RateLimiter

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@dataclass
class Backend:
    client: LLMClient
    model: str
    server: LocalModelServer | None = None
    gguf: GGUFInfo | None = None  # the local backend's model file

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def key_env(cfg: SessionConfig, role: ModelRole) -> str | None:
    """The variable a role names for its API key; None: the default, OPENAI_API_KEY."""
    own = cfg.roles.get(role)
    return own.api_key_env if own is not None else None


def roles_in_use(cfg: SessionConfig) -> dict[ModelRole, SessionConfig]:
    """The settings to check, by role: the debate role's (the session's own unless the
    role sets its own), then each other role's that differ from the session's."""
    found = {ModelRole.DEBATE: cfg.role(ModelRole.DEBATE)}
    for role in ModelRole:
        own = cfg.role(role)
        if role not in found and (own is not cfg or key_env(cfg, role) is not None):
            found[role] = own
    return found


def check_backend(cfg: SessionConfig) -> None:
    """What can be checked about the backend settings of every role without starting
    anything."""
    for role, own in roles_in_use(cfg).items():
        label = "" if own is cfg and key_env(cfg, role) is None else f"role {role.value}: "
        try:
            if own.llm == "openai":
                _check_endpoint(own, key_env(cfg, role))
            if own.llm == "local":
                require_server()
                read_gguf(model_file(own.local_model))  # a missing or broken model file, in one line
            resolve_prices(own, model_name(own))
        except UserError as exc:
            if not label:
                raise
            raise UserError(label + exc.problem, exc.fix) from None


def model_name(cfg: SessionConfig) -> str:
    """The model the backend will run: --model, else the backend's default."""
    if cfg.model or cfg.llm == "openai":
        return cfg.model
    return served_name(cfg.local_model) if cfg.llm == "local" else "scripted"


def role_models(cfg: SessionConfig, served: str | None = None) -> dict[ModelRole, str]:
    """Which model plays each role under `cfg`: a role with settings of its own, its
    model; any other, the session's: `served` (what its open backend serves) when given,
    else the settings' model."""
    session = model_name(cfg) if served is None else served
    return {role: model_name(cfg.role(role)) if role in cfg.roles else session for role in ModelRole}


def _check_endpoint(cfg: SessionConfig, env: str | None) -> None:
    if env is not None and not os.environ.get(env):
        raise UserError(f"the API key variable {env} is not set", f"set {env} in the environment")
    if env is None and not os.environ.get(DEFAULT_KEY_ENV) and not _base_url(cfg):
        raise UserError(
            "--llm openai needs OPENAI_API_KEY (or --base-url for a local endpoint)",
            "set it in the environment",
        )
    if not cfg.model:
        raise UserError("--llm openai needs a model name", "pass --model, e.g. --model gpt-4o-mini")


def _base_url(cfg: SessionConfig) -> str | None:
    return cfg.base_url or os.environ.get("OPENAI_BASE_URL")


def open_backend(cfg: SessionConfig) -> Backend:
    """The session's client: its one backend when every role plays on it (at the
    temperature each call asks for), else a RoutingClient over each role's."""
    if any(own.llm == "openai" for own in roles_in_use(cfg).values()):
        check_backend(cfg)  # every role's, before anything is started
    opener = _Opener()
    routes = {}
    try:
        for role in ModelRole:
            own = cfg.roles.get(role)
            client = opener.backend(cfg.role(role), key_env(cfg, role))
            routes[role] = Route(client, own.temperature if own is not None else None)
    except BaseException:
        if opener.server is not None:  # started for a role before another failed
            opener.server.stop()
        raise
    debate = routes[ModelRole.DEBATE].client
    one = len(opener.backends) == 1 and all(r.temperature is None for r in routes.values())
    client = debate if one else RoutingClient(routes)
    return Backend(client, debate.model, opener.server, opener.gguf)


@dataclass
class _Opener:
    """Starts what the roles need, each thing once: a backend per distinct settings, a
    local model server, and per endpoint (URL and key) one HTTP client and one rate
    limiter, so roles on one endpoint share its limits."""

    backends: dict[tuple[object, ...], LLMClient] = field(default_factory=dict)
    server: LocalModelServer | None = None
    gguf: GGUFInfo | None = None
    endpoints: dict[tuple[str | None, str], tuple[AsyncOpenAI, RateLimiter]] = field(default_factory=dict)

    def backend(self, own: SessionConfig, env: str | None) -> LLMClient:
        # temperature and prices are not the backend's: they are applied per call
        identity = (
            own.llm,
            model_name(own),
            _base_url(own) if own.llm == "openai" else None,
            env,
            own.sampling,
            own.reasoning_effort,
        )
        if identity not in self.backends:
            self.backends[identity] = self._open(own, env)
        return self.backends[identity]

    def _open(self, own: SessionConfig, env: str | None) -> LLMClient:
        if own.llm == "fake":
            from dagmca.llm.fake import ScriptedLLM

            return ScriptedLLM(model=model_name(own))

        from dagmca.llm.openai_backend import OpenAIBackend
        from dagmca.llm.retry import RetryPolicy
        from dagmca.llm.structured import StructuredMode

        policy = RetryPolicy(attempts=own.max_retries + 1)
        sampling = own.sampling_params()
        if own.llm == "local":
            server = self._local_server(own)
            local = OpenAIBackend(
                self._endpoint(server.base_url, "local", own)[0],
                server.name,
                policy=policy,
                seed=own.seed,
                # llama.cpp turns a whole json_schema into a grammar: no negotiation needed
                structured=StructuredMode.SCHEMA,
                sampling=LOCAL_SAMPLING if sampling is None else sampling,
                # the bundled 135M model's concession (llm/field_order.py); a model the
                # user brings (--local-model) gets the evidence first, as endpoints do
                decision_first=not own.local_model,
            )
            local.reported_context_window = server.context
            return local

        client, limiter = self._endpoint(_base_url(own), env or DEFAULT_KEY_ENV, own)
        return OpenAIBackend(
            client,
            own.model,
            policy=policy,
            seed=own.seed,
            reasoning_effort=own.reasoning_effort,
            sampling=sampling,
            limiter=limiter,
        )

    def _local_server(self, own: SessionConfig) -> LocalModelServer:
        """The one local server every local role shares (roles do not choose the file)."""
        if self.server is None:
            path = model_file(own.local_model)
            self.gguf = read_gguf(path)  # a file that is not a model fails here, in one line
            context = slot_context(own.local_model, self.gguf.context_length, own.context_window)
            self.server = LocalModelServer(
                parallel=local_slots(own.concurrency),
                seed=own.seed,
                model=path,
                name=model_name(own),
                context=context,
            ).start()
        return self.server

    def _endpoint(
        self, base_url: str | None, env: str, own: SessionConfig
    ) -> tuple[AsyncOpenAI, RateLimiter]:
        """The HTTP client and the rate limiter of an endpoint (its URL and the key it is
        used with: another key may be another account, with its own limits); the limits
        are those of the first role on it."""
        if (base_url, env) not in self.endpoints:
            from dagmca.llm.limiter import RateLimiter
            from dagmca.llm.openai_call import make_client

            key = "local" if env == "local" else os.environ.get(env) or "not-needed"
            client = make_client(base_url, key, own.request_timeout_s)
            self.endpoints[(base_url, env)] = (client, RateLimiter(own.rpm, own.tpm))
        return self.endpoints[(base_url, env)]


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
