"""What a judge check would ask and spend, before it asks: its calls exactly (the battery
is fixed by the tasks), and its cost between its prompts alone (every reply empty) and
every prompt and reply at its cap, at each role's prices."""

from __future__ import annotations

import random

from dagmca.config import SessionConfig
from dagmca.evaluation.judgecheck.battery import (
    PAD_TOKENS,
    WRITE_TOKENS,
    miss_messages,
    near_messages,
    own_messages,
    pad_messages,
    write_messages,
)
from dagmca.evaluation.judgecheck.models import CheckProjection
from dagmca.evaluation.judgecheck.running import CheckPlan, as_judge
from dagmca.evaluation.judgecheck.tasks import near_miss
from dagmca.evaluation.judging import ORDERS, pair_messages
from dagmca.evaluation.pairs import reference
from dagmca.graph import ModelRole
from dagmca.llm.base import Message, Usage
from dagmca.llm.prices import Prices


def _prices(cfg: SessionConfig) -> Prices:
    from dagmca.llm.factory import model_name
    from dagmca.llm.prices import resolve_prices

    return resolve_prices(cfg, model_name(cfg))


def project_check(plan: CheckPlan, base: SessionConfig) -> CheckProjection:
    from dagmca.llm.tokens import TokenCounter

    counter = TokenCounter()
    judge_cap = base.role(ModelRole.JUDGE).final_tokens()
    writer = _prices(base.role(ModelRole.DEBATE))
    judge = _prices(base.role(ModelRole.JUDGE))
    own = _prices(as_judge(base).role(ModelRole.DEBATE))
    other = _prices(as_judge(base, plan.other_model).role(ModelRole.DEBATE)) if plan.other_model else own
    parts: dict[str, int] = {"writer": 0, "judge": 0, "own": 0, "other": 0}
    low = high = 0.0
    filler = "word " * WRITE_TOKENS  # an answer at its cap, to bound what quotes it

    def ask(part: str, prices: Prices, messages: list[Message], cap: int) -> None:
        nonlocal low, high
        prompt = counter.count_messages(messages)
        parts[part] += 1
        low += prices.cost(Usage(prompt_tokens=prompt))
        high += prices.cost(Usage(prompt_tokens=prompt, completion_tokens=cap))

    def judged(task_question: str, passage: str | None, shown: str | None, longer: bool) -> None:
        second = "word " * (PAD_TOKENS if longer else WRITE_TOKENS)
        for _ in ORDERS:
            ask("judge", judge, pair_messages(task_question, passage, filler, second, shown), judge_cap)

    for task in plan.tasks:
        right = reference(task)
        ask("writer", writer, write_messages(task, right), WRITE_TOKENS)
        ask("writer", writer, pad_messages(task, filler), PAD_TOKENS)
        judged(task.question, task.passage, None, longer=True)
        if right is None:
            continue
        if task.id not in plan.near and near_miss(task, random.Random(0)) is None:
            ask("writer", writer, near_messages(task), WRITE_TOKENS)
        ask("writer", writer, miss_messages(task, filler, right, right), WRITE_TOKENS)
        judged(task.question, task.passage, right, longer=False)
        if plan.other_model is not None:
            ask("own", own, own_messages(task), WRITE_TOKENS)
            ask("other", other, own_messages(task), WRITE_TOKENS)
            judged(task.question, task.passage, None, longer=False)
    return CheckProjection(
        tasks=len(plan.tasks), built_in=plan.built_in,
        reference_tasks=sum(1 for t in plan.tasks if reference(t) is not None),
        calls=sum(parts.values()), judge_calls=parts["judge"], cost_usd_min=round(low, 6),
        cost_usd_max=round(high, 6), by_part={k: v for k, v in parts.items() if v},
    )  # fmt: skip
