"""The Evaluate guide's worked example: a synthetic numeric task set on which sampling
matters, run offline with a scripted model, so the guide's numbers can be made again.

The scripted model answers each task right with probability 0.6, independently per
call, when it samples (temperature above 0); at temperature 0 it gives the same answer
every time (right on about 60% of the tasks). Its wrong answers are numbers of their
own, so they rarely agree. `single` answers at 0; `vote` samples at --vote-temperature.

    python scripts/eval_sampling_example.py --tasks 40            # vote at 0.7
    python scripts/eval_sampling_example.py --tasks 40 --vote-temperature 0
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import zlib
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from dagmca.api import Workspace
from dagmca.config import SessionConfig
from dagmca.evaluation import EvalReport, Task, parse_arms
from dagmca.evaluation.running import EvalPlan, run_eval
from dagmca.llm.base import Completion, Request
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import HashingEmbedder

SAMPLING: ContextVar[tuple[float, int | None]] = ContextVar("sampling", default=(0.0, None))


class Sampling(ScriptedLLM):
    """A scripted model whose replies see each call's temperature and seed."""

    async def complete(self, request: Request) -> Completion:
        SAMPLING.set((request.temperature, request.seed))
        return await super().complete(request)


def right_when_sampling(call: ScriptedCall) -> Any:
    if call.schema is not ShortAnswer:
        return default_responder(call)
    sid = call.meta.debate.split("/")[0]
    task = next(p for p in sid.split("-") if p.startswith("t") and p[1:].isdigit())
    temperature, seed = SAMPLING.get()
    rng = random.Random(zlib.crc32((f"{task}|{seed}|{call.prompt}" if temperature > 0 else task).encode()))
    right = rng.random() < 0.6
    return {"answer": str(2 * int(task[1:]) if right else 1000 + rng.randrange(10**6))}


async def run(tasks: int, vote_temperature: float) -> EvalReport:
    found = [
        Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=2 * i, scoring="numeric")
        for i in range(tasks)
    ]
    base = SessionConfig.model_validate({"llm": "fake", "rounds": 1, "concurrency": 8})
    plan = EvalPlan(
        eval_id="sampling", tasks=found, arms=parse_arms("mca,single,vote", base.model_dump()),
        parallel=8, vote_temperature=vote_temperature,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        async with Workspace(Path(folder) / "e.db", embedder=HashingEmbedder()) as ws:
            return await run_eval(ws, plan, base, client=Sampling(right_when_sampling))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--vote-temperature", type=float, default=0.7)
    args = parser.parse_args()
    report = asyncio.run(run(args.tasks, args.vote_temperature))
    for a in report.arms:
        acc = a.accuracy
        shown = f"{acc.value:.2f} [{acc.lo:.2f}, {acc.hi:.2f}]" if acc else "-"
        print(f"{a.arm:<11} accuracy {shown}  calls {a.calls:>5}  tokens {a.tokens.total:>7}")
    for c in report.comparisons:
        print(
            f"{c.arm} vs {c.baseline}: W/L/T {c.wins}/{c.losses}/{c.ties} over {c.tasks} tasks, "
            f"win rate {c.win_rate:.2f} [{c.lo:.2f}, {c.hi:.2f}], p {c.p_value:.3g}, p Holm {c.p_holm:.3g}"
        )


if __name__ == "__main__":
    main()
