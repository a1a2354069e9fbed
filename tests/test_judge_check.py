"""`dagmca judge-check`: the judge an eval would use, on trial, with scripted judges whose
biases are known: position, length, agreement with references and self-preference, each
with its interval and status, stored as a JudgeCheck node that an eval reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dagmca.api import Workspace
from dagmca.cli.app import app
from dagmca.config import SessionConfig
from dagmca.evaluation.judgecheck import CheckName, CheckStatus, JudgeCheckReport
from dagmca.evaluation.judgecheck.graph import check_judge_check, judge_of, latest_check
from dagmca.evaluation.judgecheck.tasks import built_in, near_miss
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION
from dagmca.evaluation.scoring import score
from dagmca.evaluation.tasks import Task
from dagmca.graph import EVALUATION_SESSION, JudgeCheckNode, NodeKind, node_from_record
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_store
from tests.support.pair_judges import battery, first_always, longer_always, reads_reference

BASE = SessionConfig.model_validate({"llm": "fake"})


def check(tmp_path: Path, client: ScriptedLLM, **kw: Any) -> JudgeCheckReport:
    async def main() -> JudgeCheckReport:
        async with Workspace(tmp_path / "j.db", embedder=HashingEmbedder()) as ws:
            return await ws.judge_check(settings=BASE, client=client, **kw)

    return asyncio.run(main())


def measure(report: JudgeCheckReport, name: CheckName) -> Any:
    return next(c for c in report.checks if c.name is name)


def test_a_judge_that_always_picks_the_first_answer_fails_position(tmp_path: Path) -> None:
    report = check(tmp_path, battery(first_always))
    position = measure(report, CheckName.POSITION)
    assert position.rate is not None and position.rate <= 0.1 and position.status is CheckStatus.FAIL
    assert position.n == 2 * 16  # a length and a reference pair per built-in task
    assert position.lo == 0.0 and 0 < position.hi < 0.15  # Wilson over the pairs
    # every verdict split, so no pair was decided: length has nothing to stand on
    assert measure(report, CheckName.LENGTH).status is CheckStatus.NOT_MEASURED
    assert report.status is CheckStatus.FAIL


def test_a_judge_that_picks_the_longer_answer_fails_length(tmp_path: Path) -> None:
    report = check(tmp_path, battery(longer_always))
    length = measure(report, CheckName.LENGTH)
    assert length.rate is not None and length.rate >= 0.9 and length.status is CheckStatus.FAIL
    assert length.n == 16 and length.lo is not None and length.lo > 0.75
    assert measure(report, CheckName.POSITION).status is CheckStatus.PASS  # consistent, and wrong


def test_a_judge_right_on_references_passes_reference_and_length(tmp_path: Path) -> None:
    client = battery(reads_reference)
    report = check(tmp_path, client)
    ref = measure(report, CheckName.REFERENCE)
    assert ref.rate is not None and ref.rate >= 0.9 and ref.status is CheckStatus.PASS and ref.n == 16
    assert measure(report, CheckName.POSITION).status is CheckStatus.PASS
    # it ties a padded restatement with its original: nothing decided, no preference measured
    assert measure(report, CheckName.LENGTH).n == 0
    selfish = measure(report, CheckName.SELF_PREFERENCE)
    assert selfish.status is CheckStatus.NOT_MEASURED and "--other-model" in selfish.note
    # the judge saw the reference on the reference pairs only, as an eval's judge sees a task's
    pairs = [c for c in client.calls if c.meta.phase == "pair"]
    assert sum("Reference answer (correct)" in c.prompt for c in pairs) == 2 * 16
    assert len(pairs) == 4 * 16


def test_self_preference_is_measured_with_a_second_model_on_equally_right_answers(tmp_path: Path) -> None:
    def own_wins(call: Any) -> dict[str, Any]:  # prefers what its own model wrote
        from tests.support.pair_judges import shown, verdict

        a, b = shown(call)
        if "answer is own" in a or "answer is own" in b:
            return verdict("A" if "answer is own" in a else "B", "this one is put the way I would put it")
        return reads_reference(call)

    other = battery(own_wins, model="another-model")
    report = check(tmp_path, battery(own_wins), other_model="another-model", other_client=other)
    selfish = measure(report, CheckName.SELF_PREFERENCE)
    # both wrong on every task (they answer "own" and "other"): equally right, and its own always won
    assert selfish.rate == 1.0 and selfish.n == 16 and selfish.status is CheckStatus.FAIL
    assert "another-model 0/16" in selfish.note


@pytest.mark.slow  # two checks of the built-in set
def test_the_check_is_stored_read_back_and_a_rerun_asks_nothing(tmp_path: Path) -> None:
    client = battery(longer_always)
    first = check(tmp_path, client)
    asked = len(client.calls)
    again = check(tmp_path, client)
    assert len(client.calls) == asked  # answered from the cache
    assert again.id == first.id and again.checks == first.checks
    with open_store(str(tmp_path / "j.db")) as st:
        (node,) = st.nodes(EVALUATION_SESSION, NodeKind.JUDGE_CHECK)
        assert node.id == first.id and node.props["status"] == "fail"
        assert node.props["judge_model"] == "scripted" and node.props["judge_prompt_version"] == "pair-2"
        assert check_judge_check(st, first.id) == []


def test_the_built_in_tasks_answers_are_right_and_their_near_misses_wrong() -> None:
    tasks, near = built_in()
    assert len(tasks) == 16 and len({t.id for t in tasks}) == 16 and built_in() == (tasks, near)
    for t in tasks:
        assert score(t, str(t.answer)).correct is True
        assert score(t, near[t.id]).correct is False, t.id
    import random

    rng = random.Random(0)
    assert near_miss(Task(id="n", question="q", answer="41"), rng) != "41"
    assert near_miss(Task(id="c", question="q", choices=["x", "y"], answer="B"), rng) == "A"
    assert near_miss(Task(id="t", question="q", answer="Paris"), rng) is None  # asked of the writer


@pytest.mark.slow  # 112 calls through the CLI's whole stack
def test_judge_check_json_carries_every_check_and_dry_run_spends_nothing(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    args = ["judge-check", "--llm", "fake", "--store", str(db), "--json"]
    dry = CliRunner().invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    projected = json.loads(dry.stdout)
    assert projected["tasks"] == 16 and projected["calls"] == 16 * 7 and projected["judge_calls"] == 16 * 4
    assert not db.exists()
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert [c["name"] for c in data["checks"]] == ["position", "length", "reference", "self_preference"]
    for c in data["checks"]:
        assert set(c) >= {"name", "rate", "lo", "hi", "n", "status"}
    assert data["calls"] == projected["calls"]
    assert data["status"] in ("pass", "warn", "fail")


def test_a_check_stored_under_the_judge_prompts_old_name_is_still_found(tmp_path: Path) -> None:
    """Earlier versions stored a check's pair-prompt version as `prompt_version`: such a
    check reads back, and an eval of that judge still finds it as the judge's latest."""
    report = check(tmp_path, battery(first_always))
    with open_store(str(tmp_path / "j.db")) as st:
        (node,) = st.nodes(EVALUATION_SESSION, NodeKind.JUDGE_CHECK)
        props = dict(node.props)
        props["prompt_version"] = props.pop("judge_prompt_version")
        st.write([node.model_copy(update={"props": props})])
        (old,) = st.nodes(EVALUATION_SESSION, NodeKind.JUDGE_CHECK)
        assert "judge_prompt_version" not in old.props
        read = node_from_record(old)
        assert isinstance(read, JudgeCheckNode) and read.judge_prompt_version == JUDGE_PROMPT_VERSION
        found = latest_check(st, judge_of(BASE))
        assert found is not None and found.id == report.id and found.checks == report.checks
        assert check_judge_check(st, report.id) == []
