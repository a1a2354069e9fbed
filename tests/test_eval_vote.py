"""`vote` is self-consistency: single answers sampled at a temperature above 0, each
with its own seed, their plurality taken, sized to the debate arm by tokens or calls."""

from __future__ import annotations

import asyncio
import json
import random
import zlib
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest

from dagmca.api import Workspace
from dagmca.evaluation import EvalReport, Task, parse_arms
from dagmca.evaluation.consistency import plurality
from dagmca.evaluation.running import EvalPlan, run_eval
from dagmca.llm.base import Completion, Request
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_store
from tests.support.evals import BASE, EVAL

SAMPLING: ContextVar[tuple[float, int | None]] = ContextVar("sampling", default=(0.0, None))


class Sampled(ScriptedLLM):
    """A scripted model whose responder sees each call's temperature and seed."""

    async def complete(self, request: Request) -> Completion:
        SAMPLING.set((request.temperature, request.seed))
        self.temperatures = [*getattr(self, "temperatures", []), (request.meta.debate, request.temperature)]
        return await super().complete(request)


def right_sixty_percent(call: ScriptedCall) -> Any:
    """Right with probability 0.6, independently per call, at a temperature above 0; at
    0 the same answer every time (right on 60% of the tasks). A wrong answer is a
    number of its own, so wrong answers rarely agree."""
    if call.schema is not ShortAnswer:
        return default_responder(call)
    sid = call.meta.debate.split("/")[0]
    task = next(p for p in sid.split("-") if p.startswith("t") and p[1:].isdigit())
    temperature, seed = SAMPLING.get()
    salt = f"{task}|{seed}|{call.prompt}" if temperature > 0 else task
    rng = random.Random(zlib.crc32(salt.encode()))
    right = rng.random() < 0.6
    truth = 2 * int(task[1:])
    return {"answer": str(truth if right else 1000 + rng.randrange(10**6))}


def numeric_tasks(n: int) -> list[Task]:
    return [
        Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=2 * i, scoring="numeric") for i in range(n)
    ]


def run(
    tmp_path: Path, client: ScriptedLLM, found: list[Task], arms: str, base: Any = BASE, **kw: Any
) -> EvalReport:
    plan = EvalPlan(eval_id=EVAL, tasks=found, arms=parse_arms(arms, base.model_dump()), **kw)

    async def main() -> EvalReport:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            return await run_eval(ws, plan, base, client=client)

    return asyncio.run(main())


@pytest.mark.slow
def test_sampling_matters_vote_beats_single_only_above_temperature_0(tmp_path: Path) -> None:
    found = numeric_tasks(40)
    # a one-round debate of four agents: a vote of a few samples matches it
    small = BASE.model_copy(update={"rounds": 1, "concurrency": 8})
    report = run(tmp_path / "hot", Sampled(right_sixty_percent), found, "mca,single,vote", small, parallel=8)
    (c,) = [c for c in report.comparisons if (c.arm, c.baseline) == ("single", "vote")]
    assert c.losses > c.wins and c.p_holm < 0.05, c
    cold = run(
        tmp_path / "cold", Sampled(right_sixty_percent), found, "mca,single,vote", small,
        parallel=8, vote_temperature=0.0,
    )  # fmt: skip
    (c,) = [c for c in cold.comparisons if (c.arm, c.baseline) == ("single", "vote")]
    assert c.p_holm >= 0.05, c  # at 0 every sample is the single answer again


def test_matched_by_tokens_votes_tokens_are_within_10_percent_of_mcas_on_each_task(tmp_path: Path) -> None:
    found = numeric_tasks(3)
    report = run(tmp_path, Sampled(right_sixty_percent), found, "mca,vote", match="tokens")
    with open_store(str(tmp_path / "e.db")) as st:
        for t in found:

            def spent(prefix: str) -> int:
                return sum(
                    c.prompt_tokens + c.completion_tokens
                    for s in st.sessions() if s.id.startswith(prefix)
                    for c in st.calls(s.id)
                )  # fmt: skip

            mca, vote = spent(f"{EVAL}-mca-{t.id}-r0"), spent(f"{EVAL}-vote-{t.id}-r0-s")
            assert abs(vote - mca) <= 0.1 * mca, (t.id, mca, vote)
    vote_row = next(a for a in report.arms if a.arm == "vote")
    assert vote_row.protocol == "self-consistency"


def test_the_plurality_reads_numbers_within_tolerance_letters_and_text() -> None:
    numeric = Task(id="n", question="q", answer=100, scoring="numeric")
    assert plurality(numeric, ["99.9", "250", "100.2", None, "abc"]) == 0
    choice = Task(id="c", question="q", answer="B", scoring="choice", choices=["red", "blue"])
    assert plurality(choice, ["A", "blue", "(b)"]) == 1
    exact = Task(id="e", question="q", answer="Paris")
    assert plurality(exact, ["Rome", "the paris", "Paris."]) == 1
    assert plurality(exact, [None, ""]) is None


@pytest.mark.slow
def test_the_json_carries_each_arms_tokens_and_cost_and_the_match_rule_and_a_rerun_makes_no_call(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from dagmca.cli.app import app, main
    from tests.support.evals import TASKS, all_calls

    path, db = tmp_path / "tasks.jsonl", tmp_path / "e.db"
    path.write_text(TASKS, encoding="utf-8")
    args = ["eval", str(path), "--arms", "mca,vote,single", "--llm", "fake", "--store", str(db), "--json"]
    first = CliRunner().invoke(app, [*args, "--match", "calls"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["match"] == "calls"
    for a in data["arms"]:
        tokens = a["tokens"]
        assert tokens["prompt"] > 0 and tokens["completion"] > 0
        assert tokens["prompt"] + tokens["completion"] == tokens["total"]
        assert isinstance(a["cost_usd"], float)
    made = all_calls(db)
    again = CliRunner().invoke(app, [*args, "--match", "calls"])
    assert again.exit_code == 0 and all_calls(db) == made
    assert json.loads(again.stdout)["arms"] == data["arms"]
    assert main([*args, "--match", "dollars"]) == 2  # one line, before any call


def test_the_judge_reads_the_reference_and_prefers_the_answer_that_matches_it(tmp_path: Path) -> None:
    import re

    from dagmca.evaluation.judging import PairJudgement
    from dagmca.graph import CallPhase

    said = {"single": "4", "mca_rounds_1": "5"}  # single is right, the other arm wrong

    def respond(call: ScriptedCall) -> Any:
        sid = call.meta.debate.split("/")[0]
        arm = next((a for a in said if sid.startswith(f"{EVAL}-{a}-")), None)
        if call.schema is ShortAnswer and arm is not None:
            return {"answer": said[arm]}
        if call.meta.phase == CallPhase.FINAL and call.schema is None and arm is not None:
            return f"Adding the two numbers gives {said[arm]}."
        if call.schema is PairJudgement:  # prefers the answer that states the reference
            ref = re.search(r"<reference>\n(.*?)\n</reference>", call.prompt, re.S)
            a, b = re.findall(r"<answer>\n(.*?)\n</answer>", call.prompt, re.S)
            assert ref is not None
            pick = "A" if ref.group(1) in a else "B" if ref.group(1) in b else "tie"
            return {"reasoning": f"the reference says {ref.group(1)}", "verdict": pick}
        return default_responder(call)

    client = ScriptedLLM(respond)
    found = [Task(id="t0", question="What is 2 + 2?", answer="4")]
    report = run(tmp_path, client, found, "single,mca:rounds=1", judge_all=True)
    judged = [c for c in client.calls if c.schema is PairJudgement]
    assert judged and all("<reference>\n4\n</reference>" in c.prompt for c in judged)
    (c,) = [c for c in report.comparisons if c.kind == "judged"]
    assert (c.arm, c.wins, c.losses, c.ties) == ("single", 1, 0, 0)  # held in both orders


def test_an_open_tasks_vote_is_universal_self_consistency_one_call_picking_a_sample(tmp_path: Path) -> None:
    from dagmca.evaluation.consistency import ConsistentPick
    from tests.support.evals import longer_wins, open_tasks, scripted

    base = scripted(lambda a, t, r: "x", longer_wins)

    def respond(call: ScriptedCall) -> Any:
        if call.schema is ConsistentPick:
            assert call.prompt.count("<answer>") >= 2
            return {"reasoning": "the second agrees with most of the others", "choice": 2}
        return base.responder(call)

    client = ScriptedLLM(respond)
    report = run(tmp_path, client, open_tasks(2), "mca,vote", match="calls")
    picks = [c for c in client.calls if c.schema is ConsistentPick]
    assert len(picks) == 2  # one call per task, none spent on voting
    votes = [r for r in report.results if r.arm == "vote"]
    assert all(r.session.endswith("-s1") for r in votes)  # the second sample's final is the vote's
    made = len(client.calls)
    run(tmp_path, client, open_tasks(2), "mca,vote", match="calls")
    extra = [(c.schema, c.meta.phase, c.meta.agent, c.meta.reask) for c in client.calls[made:]]
    assert len(client.calls) == made, extra  # the pick comes from the cache on a rerun


def test_each_arm_records_the_temperature_its_debaters_answered_at(tmp_path: Path) -> None:
    warm = type(BASE).model_validate({**BASE.model_dump(), "roles": {"debate": {"temperature": 0.3}}})
    client = Sampled(right_sixty_percent)
    report = run(tmp_path, client, numeric_tasks(1), "mca,single,vote", warm, vote_temperature=0.9)
    assert {a.arm: a.temperature for a in report.arms} == {"mca": 0.3, "single": 0.3, "vote": 0.9}
    assert next(m for m in report.models if m.role == "debate").temperature == 0.3
    sampled = {t for d, t in client.temperatures if "-vote-" in d}
    assert sampled == {0.9}  # the debate role's own temperature did not replace the vote's


def test_the_dry_run_projects_a_vote_by_its_match_and_first_vote_by_its_reads(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dagmca.cli.app import app
    from tests.support.evals import TASKS

    path = tmp_path / "tasks.jsonl"
    path.write_text(TASKS, encoding="utf-8")
    args = ["eval", str(path), "--arms", "mca,vote,single,first-vote", "--llm", "fake", "--dry-run", "--json"]
    done = CliRunner().invoke(app, [*args, "--store", str(tmp_path / "e.db")])
    assert done.exit_code == 0, done.output
    arms = {a["arm"]: a for a in json.loads(done.stdout)["arms"]}
    single, mca, vote = (arms[n]["calls_max"] for n in ("single", "mca", "vote"))
    assert vote >= mca  # by tokens (the default): up to the most samples the target's tokens allow
    by_calls = CliRunner().invoke(app, [*args, "--match", "calls", "--store", str(tmp_path / "e.db")])
    calls = {a["arm"]: a["calls_max"] for a in json.loads(by_calls.stdout)["arms"]}
    assert abs(calls["vote"] - calls["mca"]) <= 2 * single  # by calls: about its target's calls
    # first-vote: each first-round answer of mca (3 leaves, 2 tasks), and a read of each
    assert arms["first-vote"]["calls_max"] == 2 * 3 * 2 and arms["first-vote"]["shared"] == 3 * 2
