"""An evaluation on the scripted fake: its sessions' short answers scripted per arm, task and
repeat, a judge that prefers the longer answer, and task files."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagmca.api import Workspace
from dagmca.config import SessionConfig
from dagmca.evaluation import EvalReport, Task, parse_arms
from dagmca.evaluation.judging import PairJudgement
from dagmca.evaluation.running import EvalPlan, run_eval
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_store

EVAL = "ev"

SID = re.compile(r"^ev-(?P<arm>.+)-(?P<task>t\d+)-r(?P<repeat>\d+)(?:-s\d+)?$")  # -sK: a vote's sample

BASE = SessionConfig.model_validate({"llm": "fake"})

Answers = Callable[[str, str, int], str | None]  # (arm slug, task, repeat) -> short answer


def scripted(answers: Answers, judge: Callable[[ScriptedCall], Any] | None = None) -> ScriptedLLM:
    def respond(call: ScriptedCall) -> Any:
        if call.schema is ShortAnswer:
            m = SID.match(call.meta.debate.split("/")[0])
            assert m is not None, call.meta.debate
            given = answers(m["arm"], m["task"], int(m["repeat"]))
            return {"answer": given if given is not None else "no answer"}
        if call.schema is PairJudgement:
            assert judge is not None
            return judge(call)
        return default_responder(call)

    return ScriptedLLM(respond)


def run(
    tmp_path: Path,
    client: ScriptedLLM,
    found: list[Task],
    arms: str,
    base: SessionConfig = BASE,
    **kw: object,
) -> tuple[EvalReport, Workspace]:
    plan = EvalPlan(eval_id=EVAL, tasks=found, arms=parse_arms(arms, base.model_dump()), **kw)  # type: ignore[arg-type]
    ws = Workspace(tmp_path / "e.db", embedder=HashingEmbedder())

    async def main() -> EvalReport:
        async with ws:
            return await run_eval(ws, plan, base, client=client)

    return asyncio.run(main()), ws


def longer_wins(c: ScriptedCall) -> object:  # the longer answer wins, in either order
    a, _, b = c.messages[-1]["content"].partition("Answer A:")[2].partition("Answer B:")
    return {
        "reasoning": "the longer answer says more",
        "verdict": "A" if len(a) > len(b) else "B" if len(b) > len(a) else "tie",
    }


TASKS = (
    '{"id": "t1", "question": "What is 2+2?", "answer": "4"}\n'
    '{"id": "t2", "question": "What is 3+3?", "answer": "6"}\n'
)


def all_calls(db: Path) -> int:
    with open_store(str(db)) as st:
        return sum(len(st.calls(s.id)) for s in st.sessions())


def open_tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(n)]
