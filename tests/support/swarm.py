"""A swarm on a scripted model with a skill per task type: the task stream, the plan and a run."""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path
from typing import Any

from dagmca.llm.base import Completion, Request, Usage
from dagmca.store.background import BackgroundStore
from dagmca.store.sqlite import SQLiteStore
from dagmca.swarm.agents import ContextOptions
from dagmca.swarm.loop import StreamPlan
from dagmca.swarm.running import run_swarm
from dagmca.swarm.tasks import SwarmTask

TYPES = ["alpha", "beta", "gamma", "delta"]

_TAG = re.compile(r"^\[(\w+)\] ")


def stream(n: int = 200) -> list[SwarmTask]:
    return [
        SwarmTask(
            id=f"t{i}",
            type=TYPES[i % 4],
            question=f"[{TYPES[i % 4]}] task {i}: say {i * 7}",
            answer=str(i * 7),
        )
        for i in range(n)
    ]


class SkillModel:
    """Solves a task of type T when the prompt holds at least 2 solved examples of T,
    else 30% of the time (decided by a hash of the prompt and the seed: reproducible)."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: Request) -> Completion:
        self.calls += 1
        messages, seed = request.messages, request.seed
        task = messages[-1]["content"]
        tag = _TAG.match(task)
        assert tag is not None
        shown = [m["content"] for m in messages[1:-1] if m["role"] == "user"]
        known = sum(1 for m in shown if m.startswith(f"[{tag.group(1)}] "))
        draw = int(hashlib.sha256(f"{seed}:{task}:{len(shown)}".encode()).hexdigest()[:8], 16) / 16**8
        answer = task.rsplit("say ", 1)[1] if known >= 2 or draw < 0.3 else "no idea"
        return Completion(text=f"Answer: {answer}", usage=Usage(prompt_tokens=10, completion_tokens=2))


def plan(
    tasks: list[SwarmTask], routers: list[str], repeats: int = 1, seed: int = 1, **kw: Any
) -> StreamPlan:
    return StreamPlan(
        swarm_id=f"test-{seed}-{'-'.join(routers)}-{repeats}",
        tasks=tasks,
        agents=[f"a{i}" for i in range(4)],
        routers=routers,
        repeats=repeats,
        seed=seed,
        snapshot_every=50,
        context=ContextOptions(examples=4),
        **kw,
    )


def go(p: StreamPlan, model: Any, db: Path) -> Any:
    async def run() -> Any:
        store = SQLiteStore(db)
        store.init_schema()
        bg = BackgroundStore(store)
        try:
            return await run_swarm(p, model, bg)
        finally:
            bg.close()
            store.close()

    return asyncio.run(run())
