"""Roles on the LLM layer: each call goes to the backend of its role (by its phase), at
the role's temperature when the role sets one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from dagmca.graph import ModelRole, role_of
from dagmca.llm.base import CallMeta, Completion, LLMClient, Message, PreflightCall, Request
from dagmca.llm.limiter import RateLimiter


@dataclass(frozen=True)
class Route:
    """Where one role's calls go: its backend, and its own temperature (None: the one
    each call asks for)."""

    client: LLMClient
    temperature: float | None = None

    def temperature_for(self, asked: float, meta: CallMeta) -> float:
        """The role's temperature replaces the session's; a re-ask of a degenerate reply
        keeps the variation it asks for, never less than the role's."""
        if self.temperature is None:
            return asked
        return max(asked, self.temperature) if meta.reask else self.temperature

    def applied(self, request: Request) -> Request:
        """`request` at the role's temperature (the same request when that changes
        nothing)."""
        temperature = self.temperature_for(request.temperature, request.meta)
        return request if temperature == request.temperature else replace(request, temperature=temperature)


class RoutingClient(LLMClient):
    """One client for a session whose roles are played by different backends: a call
    goes to its role's route. What belongs to no call (the model's name, structured
    output, the context window, token counts, the wire form a key is made of) is the
    debate role's, the session's own."""

    def __init__(self, routes: Mapping[ModelRole, Route]) -> None:
        self.routes = {role: routes[role] for role in ModelRole}
        self.debate = self.routes[ModelRole.DEBATE].client
        self.model = self.debate.model
        self.sampling = self.debate.sampling

    def route(self, meta: CallMeta | None) -> Route:
        return self.routes[role_of(meta.phase if meta is not None else "")]

    def backends(self) -> list[LLMClient]:
        """Each distinct backend once, in the roles' order (the debate role's first)."""
        return distinct([route.client for route in self.routes.values()])

    # the debate role's, read through: the pre-flight sets them on the backend
    @property
    def structured_mode(self) -> str:
        return self.debate.structured_mode

    @structured_mode.setter
    def structured_mode(self, mode: str) -> None:
        self.debate.structured_mode = mode

    @property
    def reported_context_window(self) -> int | None:
        return self.debate.reported_context_window

    @reported_context_window.setter
    def reported_context_window(self, tokens: int | None) -> None:
        self.debate.reported_context_window = tokens

    @property
    def limiter(self) -> RateLimiter | None:
        """The debate role's endpoint's rate limiter (what a build's display shows)."""
        limiter = getattr(self.debate, "limiter", None)
        return limiter if isinstance(limiter, RateLimiter) else None

    async def complete(self, request: Request) -> Completion:
        route = self.route(request.meta)
        return await route.client.complete(route.applied(request))

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self.debate.wire(messages, schema)

    async def count_tokens(self, text: str) -> int | None:
        return await self.debate.count_tokens(text)

    async def ping(self) -> None:
        """Every backend's pre-flight."""
        for backend in self.backends():
            await backend.ping()

    def preflight_calls(self) -> list[PreflightCall]:
        return [call for backend in self.backends() for call in backend.preflight_calls()]

    async def aclose(self) -> None:
        """Every backend's, even when one fails to close (the first failure is raised)."""
        failed: list[Exception] = []
        for backend in self.backends():
            try:
                await backend.aclose()
            except Exception as exc:
                failed.append(exc)
        if failed:
            raise failed[0]


def routes_of(client: LLMClient) -> dict[ModelRole, Route]:
    """The routes of a session's client: its own, or every role on the one client."""
    if isinstance(client, RoutingClient):
        return dict(client.routes)
    return {role: Route(client) for role in ModelRole}


def distinct(clients: list[LLMClient]) -> list[LLMClient]:
    """`clients` without repeats (the same object serving several roles), in order."""
    seen: dict[int, LLMClient] = {}
    for client in clients:
        seen.setdefault(id(client), client)
    return list(seen.values())
