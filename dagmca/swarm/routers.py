"""Which agent takes a task: the debate's routers over the task's type, plus Thompson
sampling. Every router reads the same record, (trials, successes) per agent and type,
so they differ only in how they turn it into a choice:

- affinity: softmax over the Laplace-smoothed success rates, at a temperature;
- random, round-robin, greedy, ucb: as the debate's router does them;
- thompson: a draw from each agent's Beta(successes + 1, failures + 1), the largest wins.

Draws are seeded by the run's seed and the task's position, so a resumed run routes
the rest of its stream as the uninterrupted run would have."""

from __future__ import annotations

import random

from dagmca.debate.router import Router
from dagmca.errors import UserError

ROUTERS: tuple[str, ...] = ("affinity", "random", "round-robin", "greedy", "ucb", "thompson")


def parse_routers(text: str) -> list[str]:
    """A comma list of router names, each known, none twice."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UserError("--router: give one router or a comma list", f"one of {', '.join(ROUTERS)}")
    for name in names:
        if name not in ROUTERS:
            raise UserError(f"--router: unknown router {name!r}", f"one of {', '.join(ROUTERS)}")
    if len(set(names)) < len(names):
        raise UserError("--router: a router is listed twice")
    return names


def new_router(kind: str, agents: list[str], seed: int, temperature: float) -> Router:
    # the debate's router has no thompson: it keeps the records, and `pick` draws
    return Router(
        kind="greedy" if kind == "thompson" else kind, pool=agents, seed=seed, temperature=temperature
    )


def pick(router: Router, kind: str, task_type: str, key: str) -> str:
    """The agent for a task of `task_type`; `key` seeds the draw."""
    if kind != "thompson":
        return router.choose(task_type, 1, key)[0]
    rng = random.Random(f"{router.seed}:{key}")
    draws = {}
    for agent in router.pool:
        r = router.record(task_type, agent)
        draws[agent] = rng.betavariate(r.successes + 1, r.trials - r.successes + 1)
    return max(router.pool, key=lambda a: (draws[a], -list(router.pool).index(a)))
