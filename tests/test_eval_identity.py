"""An eval's results are bound to what made them: another model is another eval (or a
refusal that names the difference), never a replay of the first model's answers; a
judge that cannot be reached stops the eval before it spends; a pair the judge did not
read is `unjudged`, counted apart and never a tie, and a rerun finishes it; Ctrl-C
says how to finish the eval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dagmca.api import EvalOptions
from dagmca.cli.app import app, main
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.evaluation import Task
from dagmca.evaluation.judging import PairJudgement
from dagmca.graph import CallPhase
from dagmca.llm.base import LLMError
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from tests.support.evals import BASE, TASKS, all_calls, longer_wins, open_tasks, run, scripted


@pytest.mark.slow
def test_an_eval_rerun_with_another_model_makes_calls_and_reports_that_model_and_again_makes_none(
    tmp_path: Path,
) -> None:
    path, db = tmp_path / "tasks.jsonl", tmp_path / "e.db"
    path.write_text(TASKS, encoding="utf-8")
    args = ["eval", str(path), "--arms", "single,mca", "--repeats", "2", "--noise-floor", "--llm", "fake"]
    args += ["--store", str(db), "--json"]
    runner = CliRunner()

    def once(model: str) -> dict[str, object]:
        done = runner.invoke(app, [*args, "--model", model])
        assert done.exit_code == 0, done.output
        data: dict[str, object] = json.loads(done.stdout)
        return data

    first = once("model-one")
    made = all_calls(db)
    assert made > 0
    second = once("model-two")
    assert second["eval_id"] != first["eval_id"]  # another model: another eval, run anew
    assert all_calls(db) > made
    models = second["models"]
    assert isinstance(models, list) and {m["model"] for m in models} == {"model-two"}
    assert {m["role"] for m in models} >= {"debate", "judge", "final"}
    made = all_calls(db)
    again = once("model-two")
    assert all_calls(db) == made  # the same command again is read, not run
    assert again["eval_id"] == second["eval_id"] and again["arms"] == second["arms"]


def test_an_eval_id_run_under_another_model_is_refused_naming_the_difference(tmp_path: Path) -> None:
    found = [Task(id="t0", question="What is 1 + 1?", answer="2")]
    client = scripted(lambda a, t, r: "2")
    run(tmp_path, client, found, "single", base=BASE.model_copy(update={"model": "first"}))
    made = len(client.calls)
    other = BASE.model_copy(update={"model": "second", "temperature": 0.7})
    with pytest.raises(UserError) as refused:
        run(tmp_path, client, found, "single", base=other)
    line = refused.value.line()
    assert "debate model: 'first' then, 'second' now" in line and "temperature" in line
    assert "\n" not in line and len(client.calls) == made  # refused before any call
    # a raised budget is the same eval: it resumes, it is not refused
    run(
        tmp_path,
        client,
        found,
        "single",
        base=BASE.model_copy(update={"model": "first", "max_llm_calls": 99}),
    )


def test_an_unreachable_judge_stops_the_eval_with_exit_3_before_it_spends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path, db = tmp_path / "tasks.jsonl", tmp_path / "e.db"
    path.write_text('{"id": "o1", "question": "What follows?", "passage": "A fact."}\n', encoding="utf-8")
    settings = tmp_path / "dagmca.toml"
    settings.write_text('[roles.judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "judge-model"\n')
    code = main(["eval", str(path), "--arms", "single,mca", "--llm", "fake", "--store", str(db),
                 "--config", str(settings)])  # fmt: skip
    said = capsys.readouterr().err.strip().splitlines()
    assert code == 3, said
    assert said[-1].startswith("dagmca: error: the judge cannot be used") and "127.0.0.1:9" in said[-1]
    assert not db.exists() or all_calls(db) == 0  # no session ran


def _dying_judge(broken: set[str]) -> ScriptedLLM:
    """Sessions answer; the judge's endpoint fails for the tasks in `broken`."""
    healthy = scripted(lambda a, t, r: "x", longer_wins)

    def respond(call: ScriptedCall) -> Any:
        if call.schema is PairJudgement and any(f"fact {t}?" in call.prompt for t in broken):
            return None  # the endpoint failed the call after its retries
        return healthy.responder(call)

    return ScriptedLLM(respond)


def test_a_judge_that_fails_mid_eval_leaves_pairs_unjudged_never_ties_and_a_rerun_finishes_them(
    tmp_path: Path,
) -> None:
    found = open_tasks(4)
    report, _ = run(tmp_path, _dying_judge({"1", "2"}), found, "single,mca:rounds=1")
    assert report.unjudged == 2 and report.no_verdict == 0
    (c,) = report.comparisons
    assert c.wins + c.losses + c.ties == 2  # the two read pairs; the others are no tie
    healthy = scripted(lambda a, t, r: "x", longer_wins)
    again, _ = run(tmp_path, healthy, found, "single,mca:rounds=1")
    assert again.unjudged == 0
    (c,) = again.comparisons
    assert c.wins + c.losses + c.ties == 4
    asked = [x for x in healthy.calls if x.meta.phase == CallPhase.PAIR]
    # only the two unjudged pairs are asked again (the read ones come from the cache),
    # and no session is run again
    assert {next(t for t in "0123" if f"fact {t}?" in x.prompt) for x in asked} == {"1", "2"}
    assert all(x.meta.phase == CallPhase.PAIR for x in healthy.calls)


def test_a_reply_that_fails_validation_in_one_order_is_no_verdict_not_a_tie(tmp_path: Path) -> None:
    good = scripted(lambda a, t, r: "x", longer_wins)

    def respond(call: ScriptedCall) -> Any:
        if call.schema is PairJudgement and call.meta.agent.startswith("judge-yx"):
            raise LLMError("reply does not fit PairJudgement after repair", invalid_output=True)
        return good.responder(call)

    report, _ = run(tmp_path, ScriptedLLM(respond), open_tasks(3), "single,mca:rounds=1")
    assert report.no_verdict == 3 and report.unjudged == 0
    (c,) = report.comparisons  # nothing read: counted apart, no row made of ties
    assert (c.wins, c.losses, c.ties, c.no_verdict, c.tasks) == (0, 0, 0, 3, 0)


def test_ctrl_c_on_eval_prints_its_own_one_line_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dagmca.api.sync

    def interrupted(*args: object, **kw: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(dagmca.api.sync, "in_workspace", interrupted)
    path = tmp_path / "tasks.jsonl"
    path.write_text(TASKS, encoding="utf-8")
    code = main(["eval", str(path), "--arms", "single", "--llm", "fake", "--store", str(tmp_path / "e.db")])
    said = capsys.readouterr().err.strip().splitlines()
    assert code == 130
    assert "interrupted" in said[-1] and "run the same command again" in said[-1]
    assert said[-1].startswith("dagmca: error: eval eval-")


def test_the_settings_record_each_roles_model_and_the_prompt_version() -> None:
    from dagmca.evaluation.arms import parse_arms
    from dagmca.evaluation.identity import differences, identity

    cfg = SessionConfig.model_validate(
        {"llm": "fake", "roles": {"judge": {"model": "strong", "temperature": 0.3}}}
    )
    arms = parse_arms("single", cfg.model_dump())
    made = identity(cfg, arms)
    assert made["roles"]["judge"]["model"] == "strong" and made["roles"]["judge"]["temperature"] == 0.3
    assert made["prompt_version"] and made["judge_prompt_version"]
    raised = identity(cfg.model_copy(update={"max_llm_calls": 10, "concurrency": 1}), arms)
    assert differences(made, raised) == []  # limits are not what made the answers
    cooler = cfg.model_copy(update={"roles": {}})
    assert any(d.startswith("judge model") for d in differences(made, identity(cooler, arms)))


def test_the_python_apis_default_eval_id_follows_the_model_too(tmp_path: Path) -> None:
    import asyncio

    from dagmca.api import Workspace
    from dagmca.similarity import HashingEmbedder

    found = [Task(id="t0", question="What is 1 + 1?", answer="2")]
    client = ScriptedLLM()  # the eval's default ids are not the scripted helper's `ev-`

    async def once(model: str) -> str:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            report = await ws.eval(
                found, options=EvalOptions(arms="single"), client=client, llm="fake", model=model
            )
            return report.eval_id

    first = asyncio.run(once("one"))
    made = len(client.calls)
    assert asyncio.run(once("two")) != first and len(client.calls) > made
    made = len(client.calls)
    assert asyncio.run(once("two")) != first and len(client.calls) == made


def test_the_default_eval_id_follows_the_tasks_content_not_only_their_file(tmp_path: Path) -> None:
    from dagmca.evaluation.identity import default_eval_id

    path = tmp_path / "tasks.jsonl"
    path.write_text(TASKS, encoding="utf-8")
    first = default_eval_id(path, "single", 1, "made")
    assert default_eval_id(path, "single", 1, "made") == first
    for edited in (TASKS.replace('"4"', '"5"'), TASKS.replace("2+2", "2+5")):
        path.write_text(edited, encoding="utf-8")  # a task edited in place: another eval
        assert default_eval_id(path, "single", 1, "made") != first
    found = [Task(id="t0", question="What is 1 + 1?", answer="2")]
    moved = [Task(id="t0", question="What is 1 + 1?", answer="2", scoring="numeric")]
    assert default_eval_id(found, "single", 1, "made") != default_eval_id(moved, "single", 1, "made")


def test_a_stored_session_of_a_task_edited_since_is_never_scored_as_its_answer(tmp_path: Path) -> None:
    client = scripted(lambda a, t, r: "2")
    run(tmp_path, client, [Task(id="t0", question="What is 1 + 1?", answer="2")], "single")
    made = len(client.calls)
    edited = [Task(id="t0", question="What is 2 + 2?", answer="4")]
    with pytest.raises(UserError) as refused:  # the same eval id given again
        run(tmp_path, client, edited, "single")
    line = refused.value.line()
    assert "task t0's question changed" in line and "\n" not in line
    assert len(client.calls) == made
