"""What a session's calls cost and met: one Meter for the session, whichever role or
model served a call, so the summary, the live view and the budgets read one total."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dagmca.graph import CallRecord, ModelRole
from dagmca.llm.base import Usage


@dataclass
class RoleSpend:
    """What the calls of one role on one model made and cost in this run."""

    role: str
    model: str
    calls: int = 0  # requests made (cache hits excluded), pre-flight ones included
    cache_hits: int = 0
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0


@dataclass
class Meter:
    """The session's figures for this run, written by the layers as calls go (the live
    view reads them between events; the budgets read them before each call)."""

    calls: int = 0  # requests actually made (cache hits excluded)
    failures: int = 0
    repairs: int = 0
    retries: int = 0
    cache_hits: int = 0
    refused: int = 0  # calls a budget did not allow
    invalid_outputs: int = 0  # calls answered, but not with valid structured output, even after repair
    faults: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    # what earlier runs of this session spent, as far as it is charged so far (resume,
    # revisit): budgets count it, the figures of this run above do not
    earlier_calls: int = 0
    earlier_tokens: int = 0
    earlier_cost_usd: float = 0.0
    # the pre-flight's share of calls, usage and cost above: each run's fixed overhead, so
    # budgets (which bound the session's work) leave it out
    preflight_calls: int = 0
    preflight_tokens: int = 0
    preflight_cost_usd: float = 0.0
    # the figures above by the (role, model) that served the calls; they add up to them
    by_role: dict[tuple[str, str], RoleSpend] = field(default_factory=dict)

    def charge_earlier(self, record: CallRecord) -> None:
        self.earlier_calls += 1
        self.earlier_tokens += record.prompt_tokens + record.completion_tokens
        self.earlier_cost_usd += record.cost_usd

    def of(self, role: str, model: str) -> RoleSpend:
        """The share of `role` played by `model`, started empty."""
        spend = self.by_role.get((role, model))
        if spend is None:
            spend = self.by_role[(role, model)] = RoleSpend(role, model)
        return spend

    def roles(self) -> list[RoleSpend]:
        """Every (role, model) that served a call this run, in the roles' order."""
        order = list(ModelRole)

        def rank(spend: RoleSpend) -> tuple[int, str]:
            known = spend.role in order
            return (order.index(ModelRole(spend.role)) if known else len(order), spend.model)

        return sorted(self.by_role.values(), key=rank)
