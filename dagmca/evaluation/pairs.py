"""An eval's judged pairs: which pairs of finished sessions the judge reads, and the
verdicts and graph edges it gives them.

A pair the judge did not read (its endpoint failed, the budget was spent, or its reply
never fit the schema) is kept as `unjudged` or `no_verdict`: the report counts it apart
and never as a tie, and a rerun asks the judge again (its read orders come from the
response cache, so only what is missing is paid for)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from dagmca.evaluation.arms import Arm
from dagmca.evaluation.graph import final_id, judged_edges
from dagmca.evaluation.judging import PairResult, judge_pair
from dagmca.evaluation.records import OVERALL, RunRecord, Verdict
from dagmca.evaluation.tasks import Task
from dagmca.graph import EdgeRecord
from dagmca.llm.base import Completer
from dagmca.llm.stack.base import BudgetExhausted


@dataclass(frozen=True)
class Finished:
    """A finished session's scored record and its final text (None: no final)."""

    record: RunRecord
    final_text: str | None


@dataclass(frozen=True)
class Pair:
    """One judge job: `arm`'s answer in `repeat` against `baseline`'s in
    `baseline_repeat`, reported under the labels (`mca#2` against `mca#0` for the noise
    floor)."""

    label: str
    baseline_label: str
    arm: str
    baseline: str
    task: Task
    repeat: int
    baseline_repeat: int
    trial: int


def noise_label(arm: str, repeat: int) -> str:
    return f"{arm}#{repeat}"


def pairs(
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    repeats: int,
    trials: int,
    *,
    judge_all: bool,
    noise: Sequence[str] = (),
) -> list[Pair]:
    """Every pair of arms on each judged task and repeat; and each arm of `noise`
    against itself over every pair of its repeats (its noise floor)."""
    names = [a.name for a in arms if not a.kind.derived]  # first-vote has no final to judge
    floors = [n for n in noise if n in names]
    jobs: list[Pair] = []
    for t in (t for t in tasks if t.judged or judge_all):
        for r in range(repeats):
            for a, b in combinations(names, 2):
                jobs += [Pair(a, b, a, b, t, r, r, k) for k in range(trials)]
        for arm in floors if repeats >= 2 else []:
            for i, j in combinations(range(repeats), 2):
                mine, theirs = noise_label(arm, j), noise_label(arm, i)
                jobs += [Pair(mine, theirs, arm, arm, t, j, i, k) for k in range(trials)]
    return jobs


def reference(task: Task) -> str | None:
    """The task's reference answer as the judge reads it (a choice with its text)."""
    if task.answer is None:
        return None
    text = str(task.answer)
    if task.choices:
        index = ord(text.strip().upper()[:1] or "?") - ord("A")
        if len(text.strip()) == 1 and 0 <= index < len(task.choices):
            return f"{text.strip().upper()}) {task.choices[index]}"
    return text


Run = Callable[[list[Coroutine[Any, Any, Any]]], Coroutine[Any, Any, list[Any]]]


@dataclass
class Judged:
    verdicts: list[Verdict]
    edges: list[EdgeRecord]


async def judge_all(
    jobs: Sequence[Pair],
    done: Mapping[tuple[str, str, int], Finished],
    llm: Completer,
    *,
    eval_id: str,
    max_tokens: int,
    seed: int,
    run_all: Run,
) -> Judged:
    """The verdicts of every job whose two sessions both finished (a pair one of whose
    sessions the budget left unrun is not a pair yet)."""

    async def one(job: Pair) -> tuple[list[Verdict], list[EdgeRecord]]:
        task = job.task
        mine = done[(job.arm, task.id, job.repeat)]
        theirs = done[(job.baseline, task.id, job.baseline_repeat)]
        labels = (job.label, job.baseline_label, task.id, job.repeat)
        if not mine.final_text or not theirs.final_text:  # no answer loses to an answer
            verdict: Literal["win", "loss", "tie"] = (
                "tie" if mine.final_text == theirs.final_text else ("win" if mine.final_text else "loss")
            )
            return [Verdict(*labels, verdict, OVERALL, job.trial)], []
        try:
            result: PairResult = await judge_pair(
                llm, question=task.question, passage=task.passage, answer=mine.final_text,
                baseline=theirs.final_text, max_tokens=max_tokens, seed=seed, trial=job.trial,
                reference=reference(task),
            )  # fmt: skip
        except BudgetExhausted:  # not asked: a rerun with a raised budget judges it
            return [Verdict(*labels, "unjudged", OVERALL, job.trial)], []
        mine_final, their_final = final_id(mine.record.session), final_id(theirs.record.session)
        edges = judged_edges(eval_id, mine_final, their_final, result, job.trial)
        found = [Verdict(*labels, result.verdict, OVERALL, job.trial, split=result.split)]
        found += [Verdict(*labels, v, c, job.trial) for c, v in result.criteria.items()]
        return found, edges

    ready = [
        j
        for j in jobs
        if (j.arm, j.task.id, j.repeat) in done and (j.baseline, j.task.id, j.baseline_repeat) in done
    ]
    found = await run_all([one(j) for j in ready])
    return Judged([v for vs, _ in found for v in vs], [x for _, es in found for x in es])
