"""The session's LLM client: each role's calls through one stack of layers (llm/stack/),
every stack sharing the session's gate, cache, budgets, meter and breaker.

Outermost first, a call passes: for the judge role, the check of its reasons (one
re-ask of a reason that says nothing); the breaker (is the endpoint down?), its span when
the run is traced, accounting (the meter and the call's record), the charging of
earlier runs' replayed calls, the response cache (a hit goes no further), the gate
(the concurrency limit), the budget (refused or let through), the continuation of a
cut reply, and the count of requests made; then the role's backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.errors import EndpointError, SettingsError
from dagmca.graph import CallRecord, ModelRole, role_of
from dagmca.llm.base import Completion, LLMClient, Message, Request
from dagmca.llm.cache import ResponseCache
from dagmca.llm.gate import Gate
from dagmca.llm.prices import Prices, resolve_prices
from dagmca.llm.routing import Route, distinct, routes_of
from dagmca.llm.stack.accounting import Accounting, CountRequests
from dagmca.llm.stack.base import PREFLIGHT, BudgetExhausted
from dagmca.llm.stack.breaker import Breaker, Breaking
from dagmca.llm.stack.budget import Allowance, Budget, Budgeted, Pool
from dagmca.llm.stack.cached import Cached
from dagmca.llm.stack.continuation import Continuation
from dagmca.llm.stack.gated import Gated
from dagmca.llm.stack.meter import Meter, RoleSpend
from dagmca.llm.stack.reasons import Reasons
from dagmca.llm.stack.restore import Earlier, Replaying
from dagmca.llm.stack.traced import Traced

__all__ = ["PREFLIGHT", "Budget", "BudgetExhausted", "Meter", "MeteredLLM", "Pool", "RoleSpend", "RoleTerms"]


@dataclass(frozen=True)
class RoleTerms:
    """What a role's calls are charged at, and whether its cut replies are continued
    (not on the local model, whose calls stay what the protocol's formula says)."""

    prices: Prices
    continue_cut: bool = True


def role_terms(cfg: SessionConfig, client: LLMClient) -> dict[ModelRole, RoleTerms]:
    """Each role's terms: its own settings' prices for the model that plays it."""
    routes = routes_of(client)
    terms = {}
    for role in ModelRole:
        own = cfg.role(role)
        terms[role] = RoleTerms(resolve_prices(own, routes[role].client.model), own.llm != "local")
    return terms


class CallLog(ResponseCache, Protocol):
    """Where a session's replies are kept and its calls recorded (the store's thread)."""

    def record_calls(self, calls: Sequence[CallRecord]) -> None: ...


class MeteredLLM(LLMClient):
    """`inner`: the session's client, one backend or a RoutingClient of one per role.
    `gate` and `pool`: shared with a build's other sessions (its one concurrency limit,
    its spend against the budgets); otherwise the session's own. With a `cache`, a
    request seen before is answered from it (unless `read_cache` is off); every reply
    is kept either way. `record` receives one CallRecord per call. `down_after` failed
    calls in a row stop the run (EndpointDown). `prices` and `continue_cut` are every
    role's unless `terms` gives a role its own."""

    def __init__(
        self,
        inner: LLMClient,
        *,
        concurrency: int,
        budget: Budget | None = None,
        prices: Prices | None = None,
        cache: ResponseCache | None = None,
        read_cache: bool = True,
        record: Callable[[CallRecord], None] | None = None,
        session: str = "",
        down_after: int = 8,
        continue_cut: bool = True,
        gate: Gate | None = None,
        pool: Pool | None = None,
        terms: Mapping[ModelRole, RoleTerms] | None = None,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.sampling = inner.sampling
        self.budget = budget or Budget()
        self.pool = pool
        self.cache = cache
        self.read_cache = read_cache
        self.record = record
        self.session = session
        self.down_after = down_after
        self.continue_cut = continue_cut
        everyone = RoleTerms(prices or Prices(), continue_cut)
        self.terms = {role: (terms or {}).get(role, everyone) for role in ModelRole}
        self.prices = self.terms[ModelRole.DEBATE].prices
        # what every role's stack shares
        self.gate = gate or Gate(concurrency)
        self.meter = Meter()
        self.allowance = Allowance(self.meter, self.budget, pool)
        self.breaker = Breaker(down_after)
        self.earlier = Earlier(self.meter)
        self.routes: dict[ModelRole, Route] = routes_of(inner)
        self.stacks = {role: self._stack(role, route) for role, route in self.routes.items()}

    @classmethod
    def for_session(
        cls,
        cfg: SessionConfig,
        client: LLMClient,
        *,
        calls: CallLog,
        session: str,
        budget: Budget | None = None,
        replaying: bool = False,
        gate: Gate | None = None,
        pool: Pool | None = None,
    ) -> MeteredLLM:
        """The client of a session, an eval's judge, an ask or a swarm under `cfg`: each
        role at its own model's prices, its cut replies continued unless it is local,
        every call logged under `session` in `calls`, which also keeps the replies (read
        back per `cfg.cache`, or always when `replaying` a resumed session's calls)."""
        return cls(
            client,
            concurrency=cfg.concurrency,
            budget=budget,
            terms=role_terms(cfg, client),
            cache=calls,
            read_cache=cfg.cache or replaying,
            record=lambda call: calls.record_calls([call]),
            session=session,
            down_after=cfg.endpoint_down_after,
            gate=gate,
            pool=pool,
        )

    def _stack(self, role: ModelRole, route: Route) -> LLMClient:
        terms = self.terms[role]
        layer: LLMClient = CountRequests(route.client, self.meter, role=role.value)
        layer = Continuation(layer, continue_cut=terms.continue_cut)
        layer = Budgeted(layer, self.allowance, terms.prices)
        layer = Gated(layer, self.gate)
        if self.cache is not None:
            layer = Cached(layer, self.cache, read=self.read_cache)
        layer = Replaying(layer, self.earlier)
        layer = Accounting(
            layer, self.meter, prices=terms.prices, record=self.record, session=self.session, role=role.value
        )
        layer = Traced(layer, prices=terms.prices, role=role.value)
        layer = Breaking(layer, self.breaker)
        # a judged decision's reason that says nothing is asked again once (each try
        # accounted as its own call), then marked
        return Reasons(layer) if role is ModelRole.JUDGE else layer

    # -- budgets -------------------------------------------------------------------
    def restore(self, earlier: list[CallRecord], *, replayed: bool) -> None:
        """The spend of this session's earlier runs (stack/restore.py)."""
        self.earlier.restore(earlier, replayed=replayed)

    def exhausted(self, reserve_calls: int = 0) -> bool:
        """True when starting work of `reserve_calls` more calls would break a budget;
        saying so marks the session as having hit its budget (stack/budget.py)."""
        return self.allowance.exhausted(reserve_calls)

    @property
    def budget_hit(self) -> bool:
        """Some work was skipped or refused for a budget."""
        return self.allowance.hit

    # -- per role --------------------------------------------------------------------
    def by_role(self) -> list[RoleSpend]:
        """Calls, cache hits, failures, tokens and cost of this run by (role, model);
        they add up to the meter's figures."""
        return self.meter.roles()

    # -- calls ---------------------------------------------------------------------
    async def complete(self, request: Request) -> Completion:
        role = role_of(request.meta.phase)
        # the role's temperature before the stack: the cache key and the request both carry it
        return await self.stacks[role].complete(self.routes[role].applied(request))

    async def ping(self) -> None:
        """Every backend's pre-flight, once each (in the roles' order), through the stack
        of the first role it plays: each negotiates its own structured-output mode, and
        what negotiating cost is accounted."""
        first = {id(route.client): role for role, route in reversed(self.routes.items())}
        debate = self.routes[ModelRole.DEBATE].client
        for backend in distinct([route.client for route in self.routes.values()]):
            try:
                await self.stacks[first[id(backend)]].ping()
            except EndpointError as exc:
                if backend is debate:  # the session's own endpoint: as without roles
                    raise
                # a role's own endpoint is a setting of that role: named, before any call
                role = first[id(backend)].value
                raise SettingsError(
                    f"roles.{role}: its endpoint does not answer ({exc.problem})",
                    f"check [roles.{role}] base_url and api_key_env (`dagmca doctor` checks every endpoint)",
                ) from None
        # what the pre-flight found out about the session's own (debate) endpoint
        self.structured_mode = debate.structured_mode
        self.reported_context_window = debate.reported_context_window

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self.inner.wire(messages, schema)

    async def count_tokens(self, text: str) -> int | None:
        return await self.inner.count_tokens(text)

    async def aclose(self) -> None:
        await self.inner.aclose()
