"""An eval reads its judge critically: order splits counted and warned about, answer
length reported with a length-controlled win rate, hollow verdicts unread, a noise floor
for every arm whose samples vary, each arm's model named with a warning when the judge
is one of them, and the judge's latest check beside the results."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dagmca.cli.app import app
from dagmca.evaluation.judging import PairJudgement
from dagmca.evaluation.notices import NoticeKind
from dagmca.evaluation.report import comparisons
from dagmca.evaluation.stats import holm
from dagmca.evaluation.tasks import Task
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from tests.support.evals import SID, open_tasks, run, scripted
from tests.support.pair_judges import first_always, longer_always, shown
from tests.support.simulated_evals import length_biased


def kinds(report: Any) -> list[NoticeKind]:
    return [n.kind for n in report.notices]


def test_a_judge_that_always_picks_the_first_answer_shows_as_order_splits(tmp_path: Path) -> None:
    client = scripted(lambda a, t, r: "x", first_always)
    report, _ = run(tmp_path, client, open_tasks(6), "single,mca:rounds=1")
    (judged,) = report.comparisons
    assert judged.order_splits == 6 and judged.order_split_rate is not None and judged.order_split_rate >= 0.9
    assert (judged.wins, judged.losses, judged.ties) == (0, 0, 6)  # counted as ties, as before
    (warned,) = [n for n in report.notices if n.kind is NoticeKind.ORDER_SPLITS]
    assert "changed verdict with the order" in warned.message and warned.arms == ["single", "mca:rounds=1"]


def _sized(words: dict[tuple[str, str], int]) -> ScriptedLLM:
    """Final answers of the words `words` gives (arm slug, task), judged by length alone:
    the same answer in more words, so of equal quality."""
    base = scripted(lambda a, t, r: "x", longer_always)

    def respond(call: ScriptedCall) -> Any:
        if call.meta.phase == "final" and call.schema is None:
            m = SID.match(call.meta.debate.split("/")[0])
            assert m is not None
            n = words[(m["arm"], m["task"])]
            return " ".join(["the", "answer", "follows", "from", "the", "fact"] * (n // 6 + 1))[
                : n * 7
            ].strip()
        return base.responder(call)

    return ScriptedLLM(respond)


@pytest.mark.slow  # 30 tasks, two arms and their judged pairs
def test_a_longer_debate_of_equal_quality_wins_raw_and_not_once_length_is_controlled(tmp_path: Path) -> None:
    rng = random.Random(4)
    tasks = open_tasks(30)
    words = {}
    for t in tasks:
        shorter = rng.randint(120, 260)
        words[("single", t.id)] = shorter
        words[("mca_rounds_1", t.id)] = round(1.3 * shorter * rng.uniform(0.6, 1.3))
    report, _ = run(tmp_path, _sized(words), tasks, "single,mca:rounds=1")
    (judged,) = report.comparisons
    assert judged.p_holm < 0.05 and judged.win_rate < 0.5  # mca, the longer, wins as judged
    assert judged.lc_win_rate is not None and judged.lc_lo is not None and judged.lc_hi is not None
    assert judged.lc_lo <= 0.5 <= judged.lc_hi
    (warned,) = [n for n in report.notices if n.kind is NoticeKind.MAY_BE_LENGTH]
    assert "may be length" in warned.message
    single, mca = report.arms
    assert single.mean_words is not None and mca.mean_words is not None
    assert 1.1 < mca.mean_words / single.mean_words < 1.5


@pytest.mark.slow  # 200 evals, each with its bootstrap of a regression
@pytest.mark.parametrize("strength", [None, 3.0])
def test_over_100_length_biased_evals_the_length_controlled_test_is_rarely_significant(
    strength: float | None,
) -> None:
    rng = random.Random(11)
    raw = controlled = 0
    for i in range(100):
        runs, verdicts = length_biased(rng, 30, strength)
        (c,) = comparisons(["a", "b"], runs, verdicts, seed=i)
        raw += c.p_holm < 0.05
        assert c.lc_lo is not None and c.lc_hi is not None
        controlled += not c.lc_lo <= 0.5 <= c.lc_hi
    assert raw >= 40, raw  # the length bias is there to be controlled
    assert controlled <= 10, controlled


def test_a_verdict_whose_reasoning_is_hollow_is_no_verdict_in_every_row(tmp_path: Path) -> None:
    def hollow(call: ScriptedCall) -> dict[str, Any]:  # a consistent verdict with no argument behind it
        a, b = shown(call)
        said = "A" if a < b else "B" if b < a else "tie"
        hollow = "one sentence"  # the field's description copied back: no reason
        crit = [{"criterion": c, "reasoning": hollow, "verdict": said} for c in ("insight", "clarity")]
        return {"criteria": crit, "reasoning": hollow, "verdict": said}

    report, _ = run(tmp_path, scripted(lambda a, t, r: "x", hollow), open_tasks(3), "single,mca:rounds=1")
    rows = [*report.comparisons, *report.criteria]
    assert len(rows) == 3
    for row in rows:
        assert (row.wins, row.losses, row.ties, row.no_verdict) == (0, 0, 0, 3), row
    assert report.no_verdict == 3


def test_every_arm_whose_samples_vary_gets_a_noise_floor_with_its_own_p_and_holm(tmp_path: Path) -> None:
    # the sampled arms answer right in one repeat and wrong in the other: a floor with a p below 1
    answers = lambda a, t, r: str(2 * int(t[1:])) if r == 1 or a == "mca" else "-1"  # noqa: E731
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(5)]
    report, _ = run(
        tmp_path, scripted(answers), found, "mca,vote,single:temperature=0.5", repeats=2, noise_floor=True,
        match="calls",
    )  # fmt: skip
    floors = report.noise_floors
    assert [f.arm for f in floors] == ["vote", "single:temperature=0.5"]  # mca answers at 0: no floor
    assert all(f.kind == "accuracy" and f.wins + f.losses == 5 for f in floors)
    assert [f.p_holm for f in floors] == pytest.approx(holm([f.p_value for f in floors]))
    assert all(f.p_value == pytest.approx(2 / 2**5) and f.p_holm < 1.0 for f in floors)  # 5 of 5 one way


def test_each_arm_names_its_model_and_a_judge_of_its_own_model_is_warned_about(tmp_path: Path) -> None:
    client = scripted(lambda a, t, r: "x", longer_always)
    report, _ = run(tmp_path, client, open_tasks(2), "single,mca:rounds=1")
    assert [a.model.model for a in report.arms if a.model is not None] == ["scripted", "scripted"]
    (warned,) = [n for n in report.notices if n.kind is NoticeKind.SELF_PREFERENCE]
    assert "--judge-model" in warned.message and "self-preference" in warned.message
    assert report.judge is not None and report.judge.check is None  # never checked


@pytest.mark.slow  # an eval and a judge check through the CLI
def test_eval_json_carries_length_and_order_splits_and_prints_the_judges_check(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    for i in range(3):
        (folder / f"p{i}.txt").write_text(
            f"Passage {i} says that fares fell and riders rose.", encoding="utf-8"
        )
    store = ["--llm", "fake", "--store", str(tmp_path / "c.db")]
    args = ["eval", str(folder), "--arms", "single,mca:rounds=1", *store]
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "judge not checked: `dagmca judge-check`" in shown.stdout
    checked = CliRunner().invoke(app, ["judge-check", *store, "--json"])
    assert checked.exit_code == 0, checked.output
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert all(isinstance(a["mean_words"], float) and a["model"]["model"] == "scripted" for a in data["arms"])
    (judged,) = data["comparisons"]
    for key in ("order_splits", "order_split_rate", "lc_win_rate", "lc_lo", "lc_hi"):
        assert key in judged and judged[key] is not None, key
    assert data["judge"]["check"]["checks"][0]["name"] == "position"
    again = CliRunner().invoke(app, args)
    assert "judge check of " in again.stdout
    # the eval and the check are records `dagmca check` holds to their invariants
    for record in (data["eval_id"], json.loads(checked.stdout)["id"]):
        held = CliRunner().invoke(app, ["check", record, "--store", str(tmp_path / "c.db")])
        assert held.exit_code == 0 and "every invariant holds" in held.stdout, held.output


def test_the_pair_schema_is_the_evals() -> None:
    assert list(PairJudgement.model_fields) == ["criteria", "reasoning", "verdict"]
