"""`dagmca eval`: tasks, scoring, arms, statistics, judged pairs, the graph and reruns,
with a scripted model whose short answers are set per arm and task, so every accuracy
is known before the eval runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dagmca.cli.app import app, main
from dagmca.config import SessionConfig
from dagmca.errors import EndpointError, UserError
from dagmca.evaluation import EvalReport, Task, load_tasks, parse_arms
from dagmca.evaluation.arms import matched_vote, vote_for
from dagmca.evaluation.graph import judged_edges, ran_edge
from dagmca.evaluation.judging import CriterionJudgement, PairJudgement, combine, judge_pair
from dagmca.evaluation.scoring import score
from dagmca.evaluation.stats import (
    Outcome,
    bootstrap_win_rate,
    holm,
    sign_test,
    student_t_quantile,
    wilson,
    win_rate,
)
from dagmca.graph import EVALUATION_SESSION, CallPhase, EdgeType, NodeKind, role_of
from dagmca.graph.schema import ModelRole
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.scoring import normalise, pick_choice
from dagmca.store import open_store
from dagmca.store.check import check_evaluation
from tests.support.evals import BASE, EVAL, Answers, longer_wins, run, scripted


def tasks(n: int, **kw: object) -> list[Task]:
    return [Task.model_validate({"id": f"t{i}", "question": f"What is {i} + {i}?", **kw}) for i in range(n)]


def arm(report: EvalReport, name: str) -> object:
    return next(a for a in report.arms if a.arm == name)


# -- scoring ----------------------------------------------------------------------------
def test_exact_scoring_normalises_case_punctuation_and_articles() -> None:
    t = Task(id="a", question="Capital of France?", answer="Paris")
    assert normalise("  The PARIS! ") == "paris"
    assert score(t, "the paris.").correct is True
    assert score(t, "Lyon").correct is False
    n = Task(id="n", question="What is 3 - 8?", answer="-5")
    assert score(n, "The result is -5.").correct is True and score(n, "5").correct is False
    assert score(n, "minus five").parsed is False


def test_numeric_scoring_has_a_relative_tolerance_and_a_log10_error() -> None:
    t = Task(id="n", question="How many?", answer=1000, scoring="numeric")
    assert score(t, "about 1,005 people").correct is True  # within 1%
    assert score(t, "1020").correct is False
    assert score(t, "1020", tolerance=0.05).correct is True
    assert score(t, "10000").log10_error == pytest.approx(1.0)
    bad = score(t, "a great many")
    assert bad.correct is False and bad.parsed is False


def test_choice_scoring_takes_a_letter_or_the_text_of_one_choice() -> None:
    choices = ["Paris", "Lyon", "Nice"]
    assert pick_choice("B", choices) == 1 and pick_choice("(c)", choices) == 2
    assert pick_choice("A) Paris", choices) == 0 and pick_choice("It is Nice", choices) == 2
    assert pick_choice("Paris or Lyon", choices) is None
    t = Task(id="c", question="Where?", answer="B", choices=choices)
    assert t.rule == "choice"
    assert score(t, "Lyon").correct is True and score(t, "a").correct is False
    assert score(t, "Marseille").parsed is False


def test_no_answer_is_wrong_and_a_parse_failure_under_every_rule() -> None:
    for t in (
        Task(id="a", question="q", answer="x"),
        Task(id="b", question="q", answer=3, scoring="numeric"),
        Task(id="c", question="q", answer="A", choices=["x", "y"]),
    ):
        s = score(t, None)
        assert s.correct is False and s.parsed is False
    assert score(Task(id="j", question="q"), "anything").correct is None  # judged: no reference


# -- statistics on known values ---------------------------------------------------------
def test_wilson_interval_on_known_values() -> None:
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_holm_and_the_sign_test_on_known_values() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert sign_test(8, 0) == pytest.approx(2 / 256)
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == pytest.approx(1.0)


def test_the_sign_test_is_scipy_s_exact_binomial_test() -> None:
    from scipy.stats import binomtest

    for wins in range(0, 41, 3):
        for losses in (*range(0, 41, 5), 300):
            if wins + losses:
                expected = binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue
                assert sign_test(wins, losses) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_the_t_quantile_is_scipy_s() -> None:
    """The length-controlled interval's t quantile, computed without scipy."""
    from scipy.stats import t

    for dof in (*range(1, 40), 99, 100, 501):
        for level in (0.5, 0.8, 0.95, 0.99):
            assert student_t_quantile(level, dof) == pytest.approx(t.ppf(0.5 + level / 2, dof), rel=1e-9)
    with pytest.raises(ValueError):
        student_t_quantile(1.0, 3)


def test_bootstrap_over_tasks_is_seeded_and_brackets_the_rate() -> None:
    always = [Outcome(f"t{i}", 1, 0, 0) for i in range(10)]
    assert win_rate(always) == 1.0 and bootstrap_win_rate(always) == (1.0, 1.0)
    mixed = [Outcome(f"t{i}", i % 2, 1 - i % 2, 0) for i in range(20)]
    lo, hi = bootstrap_win_rate(mixed, seed=3)
    assert lo < 0.5 < hi and (lo, hi) == bootstrap_win_rate(mixed, seed=3)
    assert win_rate([Outcome("t", 0, 0, 4)]) == 0.5  # ties are half a win


# -- judged pairs -----------------------------------------------------------------------
def test_the_pair_verdict_schema_puts_reasoning_before_the_verdict_and_the_judge_role_plays_it() -> None:
    assert list(PairJudgement.model_fields) == ["criteria", "reasoning", "verdict"]
    assert list(CriterionJudgement.model_fields) == ["criterion", "reasoning", "verdict"]
    assert role_of(CallPhase.PAIR) is ModelRole.JUDGE


def _judged(judge: Callable[[ScriptedCall], Any]) -> tuple[str, list[ScriptedCall]]:
    client = ScriptedLLM(judge)
    result = asyncio.run(
        judge_pair(client, question="q", passage=None, answer="GOOD", baseline="POOR", max_tokens=200, seed=0)
    )
    assert [o.order for o in result.orders] == ["xy", "yx"]
    return result.verdict, client.calls


def test_pairs_are_judged_blind_in_both_orders_and_a_split_is_a_tie() -> None:
    verdict, calls = _judged(lambda c: {"reasoning": "first reads well", "verdict": "A"})
    assert verdict == "tie"  # a judge that always prefers the first answer wins nothing
    assert len(calls) == 2 and all(c.meta.phase == CallPhase.PAIR for c in calls)
    assert calls[0].prompt.index("GOOD") < calls[0].prompt.index("POOR")
    assert calls[1].prompt.index("POOR") < calls[1].prompt.index("GOOD")
    assert not any(name in calls[0].prompt for name in ("mca", "vote", "single"))

    def content(c: ScriptedCall) -> Any:
        user = c.messages[-1]["content"]
        return {
            "reasoning": "the good one answers it",
            "verdict": "A" if user.index("GOOD") < user.index("POOR") else "B",
        }

    assert _judged(content)[0] == "win"


def test_each_criterion_is_combined_over_both_orders_and_recorded() -> None:
    def by_criterion(c: ScriptedCall) -> Any:
        user = c.messages[-1]["content"]
        good_first = user.index("GOOD") < user.index("POOR")
        return {
            "criteria": [
                {
                    "criterion": "insight",
                    "reasoning": "it goes deeper",
                    "verdict": "A" if good_first else "B",
                },
                {"criterion": "clarity", "reasoning": "it reads more clearly", "verdict": "A"},
            ],
            "reasoning": "overall the good one",
            "verdict": "A" if good_first else "B",
        }

    client = ScriptedLLM(by_criterion)
    result = asyncio.run(
        judge_pair(client, question="q", passage="p", answer="GOOD", baseline="POOR", max_tokens=300, seed=0)
    )
    assert result.verdict == "win" and result.criteria == {"insight": "win", "clarity": "tie"}
    edges = judged_edges("ev", "a/final", "b/final", result, 0)
    assert len(edges) == 6 and len({e.key for e in edges}) == 6
    assert {(e.props["criterion"], e.props["combined"]) for e in edges} == {
        ("overall", "win"),
        ("insight", "win"),
        ("clarity", "tie"),
    }
    assert combine("win", "tie") == "tie" and combine("loss", "loss") == "loss"


# -- running an eval --------------------------------------------------------------------
def test_right_beats_wrong_with_an_interval_off_half_and_a_holm_p_under_005(tmp_path: Path) -> None:
    answers: Answers = lambda a, t, r: str(2 * int(t[1:])) if a == "single" else "-1"  # noqa: E731
    found = tasks(8, answer=None, scoring=None)
    found = [t.model_copy(update={"answer": str(2 * i), "scoring": "exact"}) for i, t in enumerate(found)]
    report, _ = run(tmp_path, scripted(answers), found, "single,single:temperature=0.5")
    right, wrong = arm(report, "single"), arm(report, "single:temperature=0.5")
    assert right.accuracy.value == 1.0 and wrong.accuracy.value == 0.0  # type: ignore[attr-defined]
    assert wrong.accuracy.parse_failures == 0  # type: ignore[attr-defined]
    (c,) = report.comparisons
    assert (c.wins, c.losses, c.ties) == (8, 0, 0)
    assert c.lo > 0.5 and c.p_holm < 0.05


def test_an_unparseable_answer_is_wrong_and_counted_a_parse_failure(tmp_path: Path) -> None:
    found = [
        Task(id=f"t{i}", question=f"How many in box {i}?", answer=10, scoring="numeric") for i in range(3)
    ]
    answers: Answers = lambda a, t, r: "10" if t == "t0" else ("lots" if t == "t1" else None)  # noqa: E731
    report, _ = run(tmp_path, scripted(answers), found, "single")
    acc = report.arms[0].accuracy
    assert acc is not None and (acc.scored, acc.correct, acc.parse_failures) == (3, 1, 2)
    assert [r.parse_failure for r in report.results] == [False, True, True]


def test_vote_calls_match_mcas_on_each_task_under_match_calls(tmp_path: Path) -> None:
    found = tasks(2, answer="0")
    report, _ = run(tmp_path, scripted(lambda a, t, r: "0"), found, "mca,vote,single", match="calls")
    sessions = {(r.arm, r.task): r.session for r in report.results}
    with open_store(str(tmp_path / "e.db")) as st:
        for t in found:
            mca, single = (len(st.calls(sessions[(a, t.id)])) for a in ("mca", "single"))
            # the vote's samples: single-agent sessions of their own, as many as match
            vote = sum(
                len(st.calls(s.id)) for s in st.sessions() if s.id.startswith(f"{EVAL}-vote-{t.id}-r0-s")
            )
            assert abs(mca - vote) <= single // 2 + 1, (t.id, mca, vote)
            # one debate call, then the final integration and the short answer
            assert single == 3
    assert next(a for a in report.arms if a.arm == "vote").protocol == "self-consistency"
    assert matched_vote(9) == {"agents": 4, "ensemble_voters": 4}
    assert vote_for(11) == matched_vote(9)


def test_the_graph_has_the_evaluation_its_sessions_and_verdicts_and_a_rerun_makes_no_call(
    tmp_path: Path,
) -> None:
    def judge(c: ScriptedCall) -> object:  # the longer answer wins, in either order
        a, _, b = c.messages[-1]["content"].partition("Answer A:")[2].partition("Answer B:")
        return {
            "reasoning": "the longer answer says more",
            "verdict": "A" if len(a) > len(b) else "B" if len(b) > len(a) else "tie",
        }

    found = [*tasks(2, answer="4"), Task(id="t9", question="What follows?", passage="A passage.")]
    client = scripted(lambda a, t, r: "4", judge)
    report, _ = run(tmp_path, client, found, "single,mca:rounds=1", repeats=2, noise_floor=True)
    assert report.judge is not None and report.judge.orders == 2
    assert [c.kind for c in report.comparisons] == ["accuracy", "judged"]
    assert len(report.noise_floors) == 1  # no arm varies at temperature 0: the first arm's
    made = len(client.calls)
    with open_store(str(tmp_path / "e.db")) as st:
        (ev,) = st.nodes(EVALUATION_SESSION, NodeKind.EVALUATION)
        assert ev.props["eval_id"] == EVAL and ev.props["tasks"] == 3 and ev.props["status"] == "done"
        assert json.loads(str(ev.props["summary"]))["arms"][0]["arm"] == "single"
        ran = st.edges(EVALUATION_SESSION, EdgeType.RAN)
        assert len(ran) == 2 * 3 * 2 and all(st.has_session(e.target) for e in ran)
        judged = st.edges(EVALUATION_SESSION, EdgeType.JUDGED_AGAINST)
        # t9 in 2 repeats, both orders; and the noise floor's pair, both orders
        assert len(judged) == 2 * 2 + 2
        assert {e.props["order"] for e in judged} == {"xy", "yx"}
        assert all(e.props["reason"] and e.props["criterion"] == "overall" for e in judged)
        assert all(st.get_node(e.source).kind is NodeKind.FINAL for e in judged)  # type: ignore[union-attr]
        assert check_evaluation(st, EVAL) == []
        st.write(edges=[ran_edge(EVAL, judged[0].source, arm="x", task="t0", repeat=0)])
        assert check_evaluation(st, EVAL) == [f"RAN edge to {judged[0].source}, which is not a Session"]
        # the judge's calls are logged under the eval id, as the judge role's
        pair_calls = st.calls(EVAL)
        assert len(pair_calls) == len(judged)
        assert {(c.phase, c.role) for c in pair_calls} == {("pair", "judge")}
    again, _ = run(tmp_path, client, found, "single,mca:rounds=1", repeats=2, noise_floor=True)
    assert len(client.calls) == made  # finished sessions are read, the judge's calls cached
    assert again.model_dump(exclude={"eval_id"}) == report.model_dump(exclude={"eval_id"})


def test_an_arm_against_its_own_repeat_has_a_noise_floor_interval_holding_half(tmp_path: Path) -> None:
    found = [
        Task(id=f"t{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(8)
    ]
    report, _ = run(
        tmp_path, scripted(lambda a, t, r: "x", longer_wins), found, "single", repeats=2, noise_floor=True
    )
    (floor,) = report.noise_floors
    assert floor.kind == "judged" and floor.wins + floor.losses + floor.ties == 8
    assert floor.lo <= 0.5 <= floor.hi


def test_a_cypher_query_lists_where_an_arm_lost_and_why(tmp_path: Path) -> None:
    from dagmca.store.embedded import query

    def ordered(c: ScriptedCall) -> object:  # a consistent preference that both arms can win
        a, _, b = c.messages[-1]["content"].partition("Answer A:")[2].partition("Answer B:")
        return {
            "reasoning": f"prefers {min(a, b)[:20]}",
            "verdict": "A" if a < b else "B" if b < a else "tie",
        }

    found = [
        Task(id=f"t{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(6)
    ]
    report, _ = run(tmp_path, scripted(lambda a, t, r: "x", ordered), found, "single,mca:rounds=1")
    (judged,) = report.comparisons
    assert judged.losses > 0
    lost = """MATCH (e:Evaluation {eval_id: $eval})-[:RAN {arm: 'single'}]->(s:Session),
          (f:Final {session: s.id})-[j:JUDGED_AGAINST]->(g:Final)
    WHERE j.combined = 'loss' AND j.criterion = 'overall'
    MATCH (e)-[r:RAN {arm: 'mca:rounds=1'}]->(t:Session {id: g.session})
    RETURN r.task AS task, j.order AS order, j.reason AS reason ORDER BY task, order"""
    with open_store(str(tmp_path / "e.db")) as st:
        _, rows = query(st, lost, {"eval": EVAL})
    assert len(rows) == 2 * judged.losses and all(r["reason"].startswith("prefers") for r in rows)


def test_a_rerun_with_a_new_arm_runs_only_that_arms_sessions(tmp_path: Path) -> None:
    found = tasks(2, answer="0")
    client = scripted(lambda a, t, r: "0")
    run(tmp_path, client, found, "single")
    first = len(client.calls)
    report, _ = run(tmp_path, client, found, "single,single:temperature=0.5")
    added = client.calls[first:]
    assert added and all("temperature_0.5" in c.meta.debate for c in added if c.meta.debate)
    assert [a.sessions for a in report.arms] == [2, 2]


def test_the_settings_budget_caps_the_whole_eval_and_a_rerun_with_more_finishes_it(tmp_path: Path) -> None:
    found = tasks(4, answer="0")
    client = scripted(lambda a, t, r: "0")
    two = SessionConfig.model_validate({"llm": "fake", "max_llm_calls": 6})  # two single sessions
    # one session at a time, so the budget is spent exactly when the second one ends
    report, _ = run(tmp_path, client, found, "single", base=two, parallel=1)
    assert report.skipped == 2 and report.arms[0].sessions == 2 and len(client.calls) == 6
    four = SessionConfig.model_validate({"llm": "fake", "max_llm_calls": 12})
    report, _ = run(tmp_path, client, found, "single", base=four, parallel=1)
    assert report.skipped == 0 and report.arms[0].sessions == 4 and len(client.calls) == 12


def test_a_session_cut_short_by_a_dead_endpoint_is_resumed_by_the_rerun(tmp_path: Path) -> None:
    found = tasks(2, answer="2")
    healthy = scripted(lambda a, t, r: "2")

    def dying(call: ScriptedCall) -> Any:  # the second task's calls all fail
        return None if "t1-r0" in call.meta.debate else healthy.responder(call)

    with pytest.raises(EndpointError) as raised:
        run(
            tmp_path,
            ScriptedLLM(dying),
            found,
            "single",
            base=BASE.model_copy(update={"endpoint_down_after": 2}),
        )
    # the fix is the eval's: rerunning it resumes the session, no `dagmca resume` needed
    assert raised.value.fix == "every finished session is kept; run the eval again to finish it"
    with open_store(str(tmp_path / "e.db")) as st:
        assert st.get_node("ev-single-t1-r0") is not None
        assert st.get_node("ev-single-t1-r0").props["status"] != "done"  # type: ignore[union-attr]
    report, _ = run(tmp_path, healthy, found, "single")
    assert [r.status for r in report.results] == ["done", "done"]
    assert report.arms[0].accuracy is not None and report.arms[0].accuracy.correct == 2
    assert all("t1-r0" in c.meta.debate for c in healthy.calls if c.meta.debate)  # t0 was not run again


# -- bad input: one line, before any call -----------------------------------------------
@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (['{"id": "a", "question": "q"}', "{not json"], ":2: not JSON"),
        (['{"id": "a"}'], ":1: question: Field required"),
        (['{"id": "a", "question": "q", "scoring": "choice", "choices": ["x"]}'], "needs an answer"),
        (['{"id": "a", "question": "q", "answer": "x", "scoring": "choice"}'], "needs choices"),
        (['{"id": "a", "question": "q"}', '{"id": "a", "question": "r"}'], ":2: duplicate id 'a'"),
        (['{"id": "a", "question": "q", "colour": 1}'], ":1: colour: Extra inputs"),
        (['{"id": "a", "question": "q", "scoring": "fuzzy"}'], ":1: unknown scoring 'fuzzy' (one of 'exact'"),
    ],
)
def test_bad_task_files_give_one_line_naming_it(tmp_path: Path, lines: list[str], says: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_tasks(path)
    assert says in caught.value.line() and "\n" not in caught.value.line()


@pytest.mark.parametrize(
    ("arms", "says"),
    [("mca,wat", "unknown arm 'wat'"), ("mca:colour=1", "unknown setting 'colour'"),
     ("mca:rounds=0", "rounds"), ("vote", "matched to mca"), ("mca,mca", "named twice")],
)  # fmt: skip
def test_bad_arms_are_refused(arms: str, says: str) -> None:
    with pytest.raises(UserError, match=says):
        parse_arms(arms, BASE.model_dump())


def test_variants_parse_into_validated_overrides() -> None:
    m, a, b, c = parse_arms("mca,mca:rounds=1,signals=false,vote,dag", BASE.model_dump())
    assert (a.name, a.overrides) == ("mca:rounds=1,signals=false", {"rounds": 1, "signals": False})
    assert m.overrides == {} and b.kind.matched_to == "mca" and c.name == "dag"


def test_the_shipped_task_sets_load() -> None:
    arithmetic = load_tasks(Path("examples/eval/arithmetic.jsonl"))
    assert len(arithmetic) == 20 and all(t.rule == "exact" for t in arithmetic)
    assert all(t.judged and t.passage for t in load_tasks(Path("examples/eval/open")))


def test_a_folder_of_passages_is_open_questions_judged_in_pairs(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("A passage.", encoding="utf-8")
    (tmp_path / "two words.txt").write_text("Another.", encoding="utf-8")
    found = load_tasks(tmp_path)
    assert [t.id for t in found] == ["one", "two-words"] and all(t.judged and t.passage for t in found)


@pytest.mark.slow
def test_the_cli_prints_the_json_report_and_refuses_bad_input_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    runner = CliRunner()
    args = ["eval", str(path), "--arms", "single", "--llm", "fake", "--store", str(tmp_path / "c.db")]
    projected = runner.invoke(app, [*args, "--arms", "single,mca,vote", "--dry-run", "--json"])
    assert projected.exit_code == 0, projected.output
    plan = json.loads(projected.stdout)
    assert [a["arm"] for a in plan["arms"]] == ["single", "mca", "vote"] and plan["judge_calls"] == 0
    assert 0 < plan["arms"][0]["calls_min"] <= plan["arms"][0]["calls_max"] < plan["arms"][1]["calls_min"]
    assert not (tmp_path / "c.db").exists()  # nothing run, nothing stored
    done = runner.invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert [a["arm"] for a in data["arms"]] == ["single"] and data["arms"][0]["accuracy"]["scored"] == 1
    assert main([*args, "--out", str(tmp_path / "report")]) == 0  # resumed: nothing run again
    shown = capsys.readouterr()
    assert "dagmca eval" in shown.out and "single" in shown.out
    assert json.loads((tmp_path / "report" / "eval.json").read_text())["results"][0]["task"] == "t1"
    assert "| single |" in (tmp_path / "report" / "eval.md").read_text()
    svg = (tmp_path / "report" / "quality-cost.svg").read_text()
    assert svg.startswith("<svg") and "single" in svg and "LLM calls" in svg
    assert "votes matched to their target by tokens" in svg
    assert main([*args[:3], "single,nope", *args[4:]]) == 2
    assert "unknown arm 'nope'" in capsys.readouterr().err
