"""What a swarm will spend, before it starts: one call per task, router and repeat,
each at most the system prompt, the examples' token cap, the task and the reply's
token cap, priced as a session's calls are. An upper bound: a prompt holds fewer
examples early in the stream, and replies are mostly shorter than their cap."""

from __future__ import annotations

from pydantic import Field

from dagmca.config import SessionConfig
from dagmca.graph.schema import Strict
from dagmca.llm.base import Usage
from dagmca.llm.local import LOCAL_MODEL_NAME
from dagmca.llm.prices import resolve_prices
from dagmca.llm.tokens import PER_MESSAGE, PER_REPLY, TokenCounter
from dagmca.swarm.agents import SYSTEM
from dagmca.swarm.loop import StreamPlan


class SwarmProjection(Strict):
    swarm_id: str
    calls: int
    prompt_tokens_max: int
    completion_tokens_max: int
    cost_usd_max: float
    prices: str = Field(description="where the prices come from")
    executor_runs: int  # code tasks' attempts: run in the sandbox, no call


def project(plan: StreamPlan, cfg: SessionConfig) -> SwarmProjection:
    counter = TokenCounter()
    runs = len(plan.routers) * plan.repeats
    framing = counter.count(SYSTEM) + 2 * PER_MESSAGE + PER_REPLY
    # every example is a user and an assistant message
    examples = plan.context.max_tokens + 2 * PER_MESSAGE * plan.context.examples
    prompt = sum(framing + examples + counter.count(t.text) for t in plan.tasks) * runs
    completion = plan.reply_tokens * len(plan.tasks) * runs
    model = cfg.model or (LOCAL_MODEL_NAME if cfg.llm == "local" else "")
    prices = resolve_prices(cfg, model)
    return SwarmProjection(
        swarm_id=plan.swarm_id,
        calls=len(plan.tasks) * runs,
        prompt_tokens_max=prompt,
        completion_tokens_max=completion,
        cost_usd_max=round(prices.cost(Usage(prompt_tokens=prompt, completion_tokens=completion)), 6),
        prices=prices.source,
        executor_runs=sum(t.is_code for t in plan.tasks) * runs,
    )
