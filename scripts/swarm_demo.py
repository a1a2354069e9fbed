"""The Swarm guide's plots: affinity, random and round-robin on the same 200-task stream
(4 types, 4 agents, 3 repeats) with a scripted model that solves a task of type T
when the agent's prompt holds at least 2 solved examples of T, and 30% of the time
otherwise: the experiment's must-show, drawn. No model is called.

    .venv/bin/python scripts/swarm_demo.py --out DIR   # DIR/swarm-demo-curves.png, swarm-demo-affinity.png
    .venv/bin/python scripts/swarm_demo.py --out docs  # the Swarm guide's pictures, redrawn

It writes only where --out says, so a run does not overwrite the guide's pictures unasked.
--router-temperature draws the same stream at another affinity temperature (default: the
setting's).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
import re
import shutil
import tempfile
from pathlib import Path

from dagmca.config.groups import ROUTER_TEMPERATURE
from dagmca.llm.base import Completion, Request, Usage
from dagmca.similarity import HashingEmbedder
from dagmca.store.background import BackgroundStore
from dagmca.store.sqlite import SQLiteStore
from dagmca.swarm.loop import StreamPlan
from dagmca.swarm.plot import write_outputs
from dagmca.swarm.running import run_swarm
from dagmca.swarm.tasks import SwarmTask

TYPES = ["alpha", "beta", "gamma", "delta"]
_TAG = re.compile(r"^\[(\w+)\] ")


class SkillModel:
    async def complete(self, request: Request) -> Completion:
        messages, seed = request.messages, request.seed
        task = messages[-1]["content"]
        tag = _TAG.match(task)
        shown = [m["content"] for m in messages[1:-1] if m["role"] == "user"]
        known = sum(1 for m in shown if tag and m.startswith(f"[{tag.group(1)}] "))
        draw = int(hashlib.sha256(f"{seed}:{task}:{len(shown)}".encode()).hexdigest()[:8], 16) / 16**8
        answer = task.rsplit("say ", 1)[1] if known >= 2 or draw < 0.3 else "no idea"
        return Completion(text=f"Answer: {answer}", usage=Usage(prompt_tokens=10, completion_tokens=2))


async def main(out: Path, temperature: float = ROUTER_TEMPERATURE) -> None:
    rng = random.Random(1)  # types in a shuffled order: a cycle would line up with round-robin
    kinds = [rng.choice(TYPES) for _ in range(200)]
    tasks = [
        SwarmTask(id=f"t{i}", type=k, question=f"[{k}] task {i}: say {i * 7}", answer=str(i * 7))
        for i, k in enumerate(kinds)
    ]
    plan = StreamPlan(
        swarm_id="demo",
        tasks=tasks,
        agents=[f"a{i}" for i in range(4)],
        routers=["affinity", "random", "round-robin"],
        repeats=3,
        seed=1,
        snapshot_every=20,
        temperature=temperature,
    )
    folder = Path(tempfile.mkdtemp())
    store = SQLiteStore(folder / "demo.db")
    store.init_schema()
    bg = BackgroundStore(store)
    try:
        report = await run_swarm(plan, SkillModel(), bg, HashingEmbedder())
    finally:
        bg.close()
        store.close()
    written = write_outputs(report, folder / "out")
    out.mkdir(parents=True, exist_ok=True)
    for path in written[1:]:
        target = out / path.name.replace("swarm-", "swarm-demo-")
        shutil.copy(path, target)
        print(f"wrote {target}")
    for row in report.routers:
        print(f"{row.router}: accuracy {row.accuracy:.2f}, S {row.s}, noise floor {row.s_noise}")
    shutil.rmtree(folder)


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    made.add_argument("--out", type=Path, required=True, help="the folder to write the pictures to")
    made.add_argument("--router-temperature", type=float, default=ROUTER_TEMPERATURE)
    return made


if __name__ == "__main__":
    args = parser().parse_args()
    asyncio.run(main(args.out, args.router_temperature))
