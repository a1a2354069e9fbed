"""Budgets: a call that would break one is refused, the final integration excepted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dagmca.graph import CallPhase, CallRecord
from dagmca.graph.calls import spent
from dagmca.llm.base import CallMeta, Completion, LLMClient, Request
from dagmca.llm.prices import Prices
from dagmca.llm.stack.base import BudgetExhausted, Wrapper
from dagmca.llm.stack.meter import Meter

if TYPE_CHECKING:
    from dagmca.config import SessionConfig


@dataclass
class Budget:
    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    @classmethod
    def of(cls, cfg: SessionConfig) -> Budget:
        """The budgets `cfg` sets (--max-llm-calls, --max-tokens, --max-cost-usd)."""
        return cls(cfg.max_llm_calls, cfg.max_tokens, cfg.max_cost_usd)

    def broken_by(self, calls: int, tokens: int, cost: float, reserve_calls: int) -> bool:
        """Whether `reserve_calls` more calls, each like the average so far, would
        reach a limit after what was spent (`calls`, `tokens`, `cost`)."""
        tokens_each, cost_each = (tokens / calls, cost / calls) if calls else (0.0, 0.0)
        return (
            (self.max_calls is not None and calls + reserve_calls >= self.max_calls)
            or (self.max_tokens is not None and tokens + reserve_calls * tokens_each >= self.max_tokens)
            or (self.max_cost_usd is not None and cost + reserve_calls * cost_each >= self.max_cost_usd)
        )


@dataclass
class Pool:
    """What every session of a build spent together: the same budgets bound the whole
    build as well as each session."""

    budget: Budget
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def over(self, reserve_calls: int) -> bool:
        return self.budget.broken_by(self.calls, self.tokens, self.cost_usd, reserve_calls)

    def charge(self, calls: Iterable[CallRecord]) -> None:
        """What earlier runs spent (their call records), into the pool: a rerun's budget
        is the whole work's (an eval's, a swarm's, a judge check's), not what is left of
        this run's."""
        n, tokens, cost = spent(calls)
        self.calls += n
        self.tokens += tokens
        self.cost_usd += cost


class Allowance:
    """A session's budget against what it spent: this run's calls as the meter counts
    them (requests in flight included, so calls queued behind them see them), less the
    pre-flight's, plus what earlier runs spent; and the build's pool, when there is one."""

    def __init__(self, meter: Meter, budget: Budget | None = None, pool: Pool | None = None) -> None:
        self.meter = meter
        self.budget = budget or Budget()
        self.pool = pool
        self.hit = False  # some work was skipped or refused for a budget

    def exhausted(self, reserve_calls: int = 0) -> bool:
        """True when starting work of `reserve_calls` more calls would break a budget,
        projected from the average call so far (this session's, earlier runs included).
        Saying so marks the session as having hit its budget."""
        m = self.meter
        calls = m.calls - m.preflight_calls + m.earlier_calls
        tokens = m.usage.total - m.preflight_tokens + m.earlier_tokens
        cost = m.cost_usd - m.preflight_cost_usd + m.earlier_cost_usd
        over = self.budget.broken_by(calls, tokens, cost, reserve_calls)
        over = over or (self.pool is not None and self.pool.over(reserve_calls))
        self.hit = self.hit or over
        return over

    def allows(self, meta: CallMeta) -> bool:
        # The final integration is always allowed; anything else must leave room for it.
        return meta.phase == CallPhase.FINAL or not self.exhausted(reserve_calls=2)

    def spent(self, tokens: int, cost: float) -> None:
        """A call that went through, charged to the build's pool (the session's own spend
        is the meter's)."""
        if self.pool is not None:
            self.pool.calls += 1
            self.pool.tokens += tokens
            self.pool.cost_usd += cost


class Budgeted(Wrapper):
    """Refuses (BudgetExhausted) a call the allowance does not allow. Placed inside the
    gate, so the calls queued behind it see what the calls before them spent. `prices`:
    what the calls below it cost, for the build's pool."""

    def __init__(self, inner: LLMClient, allowance: Allowance, prices: Prices | None = None) -> None:
        super().__init__(inner)
        self.allowance = allowance
        self.prices = prices or Prices()

    async def complete(self, request: Request) -> Completion:
        if not self.allowance.allows(request.meta):
            raise BudgetExhausted("budget spent: call skipped")
        result = await self.inner.complete(request)
        self.allowance.spent(result.usage.total, self.prices.cost(result.usage))
        return result
