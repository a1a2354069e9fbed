"""An evaluation's report below its headline: each of the judge's criteria as its own
comparison, the PNG plot beside the SVG, and the origins of the dag arm's claims from
the emergence ledger; and an eval on a 1,241-word passage against a scripted strong
model whose judge writes long reasoning for every criterion."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dagmca.cli.app import main
from dagmca.config import SessionConfig
from dagmca.evaluation import EvalReport, Task
from dagmca.evaluation.breakdown import criterion_comparisons
from dagmca.evaluation.judging import PairJudgement
from dagmca.evaluation.records import Verdict
from dagmca.graph import EVALUATION_SESSION, CallPhase, EdgeType
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.metrics.ledger import final_claims
from dagmca.store import open_store
from tests.support.evals import BASE
from tests.support.evals import run as run_in_workspace
from tests.support.strong_fake import LONG_PASSAGE, SENTENCES, StrongModel


def run(
    tmp_path: Path,
    client: ScriptedLLM,
    found: list[Task],
    arms: str,
    base: SessionConfig = BASE,
    **kw: object,
) -> EvalReport:
    return run_in_workspace(tmp_path, client, found, arms, base, **kw)[0]


def session_of(call: ScriptedCall) -> str:
    return call.meta.debate.split("/")[0]


def answers(call: ScriptedCall) -> tuple[str, str]:
    """The two answers of a pair's prompt, as shown (the reply's format follows them)."""
    a, _, b = call.messages[-1]["content"].partition("Answer A:")[2].partition("Answer B:")
    return a.strip(), b.partition("\n\nReply as JSON")[0].strip()


def signed(responder: object) -> ScriptedLLM:
    """Every final answer names its session, so a judge can tell the arms apart."""

    def respond(call: ScriptedCall) -> object:
        if call.schema is None and call.meta.phase == CallPhase.FINAL:
            return f"The answer of {session_of(call)}: the facts follow."
        return responder(call)  # type: ignore[operator]

    return ScriptedLLM(respond)


def by_criterion(call: ScriptedCall) -> object:
    """Prefers single's answer on insight in both orders, the first shown on clarity
    (a position bias), and single's overall."""
    if call.schema is not PairJudgement:
        return default_responder(call)
    a, b = answers(call)
    single = "A" if "-single-" in a else "B" if "-single-" in b else "tie"
    return {
        "criteria": [
            {"criterion": "insight", "reasoning": "it goes further", "verdict": single},
            {"criterion": "clarity", "reasoning": "the first reads well", "verdict": "A"},
        ],
        "reasoning": "deeper on the whole",
        "verdict": single,
    }


def open_tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", question=f"What follows from fact {i}?", passage=f"Fact {i}.") for i in range(n)]


# -- criteria ----------------------------------------------------------------------------
def test_each_criterion_has_its_win_rate_wilson_interval_and_holm_corrected_sign_test(tmp_path: Path) -> None:
    report = run(tmp_path, signed(by_criterion), open_tasks(8), "single,mca:rounds=1")
    insight, clarity = report.criteria
    assert (insight.criterion, clarity.criterion) == ("insight", "clarity")  # the schema's order
    assert (insight.wins, insight.losses, insight.ties) == (8, 0, 0)
    assert insight.win_rate == 1.0 and insight.lo > 0.5 and insight.hi == 1.0
    assert insight.p_value == pytest.approx(2 / 256) and insight.p_holm == pytest.approx(2 * 2 / 256)
    # the position-biased criterion splits across the orders: ties, and no difference
    assert (clarity.wins, clarity.losses, clarity.ties) == (0, 0, 8)
    assert clarity.lo < 0.5 < clarity.hi and clarity.p_holm == 1.0
    (overall,) = report.comparisons
    assert overall.wins == 8  # the overall row counts only the overall verdicts


def test_criterion_rows_are_holm_corrected_together_and_ties_count_half() -> None:
    def verdicts(criterion: str, wins: int, ties: int, losses: int) -> list[Verdict]:
        kinds = ["win"] * wins + ["tie"] * ties + ["loss"] * losses
        return [Verdict("a", "b", f"t{i}", 0, k, criterion) for i, k in enumerate(kinds)]  # type: ignore[arg-type]

    rows = criterion_comparisons(
        ["a", "b"],
        # every criterion row counts the overall row's pairs: one per task here
        [*verdicts("insight", 6, 2, 2), *verdicts("clarity", 9, 0, 1), *verdicts("overall", 5, 5, 0)],
    )
    assert [r.criterion for r in rows] == ["insight", "clarity"]  # no overall row here
    insight, clarity = rows
    assert insight.win_rate == pytest.approx(0.7) and insight.lo < 0.7 < insight.hi
    assert clarity.p_value == pytest.approx(22 / 1024)
    assert clarity.p_holm == pytest.approx(min(1.0, 2 * clarity.p_value))  # the smaller p, times two
    assert insight.p_holm == pytest.approx(max(clarity.p_holm, insight.p_value))


# -- the plot ----------------------------------------------------------------------------
def _cli_eval(tmp_path: Path) -> list[str]:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    store = str(tmp_path / "c.db")
    return [
        "eval",
        str(path),
        "--arms",
        "single",
        "--llm",
        "fake",
        "--store",
        store,
        "--out",
        str(tmp_path / "r"),
    ]


@pytest.mark.slow
def test_the_report_folder_has_a_png_plot_beside_the_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (in dev) is not installed")
    assert main(_cli_eval(tmp_path)) == 0
    png = (tmp_path / "r" / "quality-cost.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 2000
    assert (tmp_path / "r" / "quality-cost.svg").read_text().startswith("<svg")


@pytest.mark.slow
def test_without_matplotlib_the_svg_is_written_and_one_line_says_why_there_is_no_png(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it now fails
    assert main(_cli_eval(tmp_path)) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "PNG" in line]
    assert said == [
        "dagmca: no PNG plot: matplotlib is not installed (pip install 'dagmca[plot]'); the SVG is written"
    ]
    assert (tmp_path / "r" / "quality-cost.svg").exists() and not (
        tmp_path / "r" / "quality-cost.png"
    ).exists()


# -- the ledger's shares per arm ---------------------------------------------------------
def strong(judge: bool = False) -> ScriptedLLM:
    model = StrongModel()

    def respond(call: ScriptedCall) -> object:
        if call.schema is PairJudgement:
            return long_judgement(call)
        return model(call)

    return ScriptedLLM(respond if judge else model, caps=True)


@pytest.mark.slow
def test_with_ledger_final_the_dag_arm_reports_its_claims_origins_and_its_vote_is_matched_without_them(
    tmp_path: Path,
) -> None:
    found = [
        Task(id=f"t{i}", question=f"What does the passage imply for sector {i}?", passage=LONG_PASSAGE)
        for i in range(2)
    ]
    # a dag (its observers, no branches) small enough for a vote to match: a vote has at
    # most 32 voters, and its ledger's calls, were they counted, would pass the match
    cfg = BASE.model_copy(update={"ledger": "final", "rounds": 1, "max_branches": 0})
    report = run(tmp_path, strong(), found, "dag,dag-vote,single", cfg)
    dag, vote, single = report.arms
    assert dag.ledger is not None and vote.ledger is None and single.ledger is None  # only the dag arms trace
    led = dag.ledger
    assert led.sessions == 2 and led.claims > 0
    shares = [led.passage, led.single, led.recombined, led.emergent, led.inferred, led.unsupported]
    assert all(s is not None for s in shares)
    assert sum(s.value for s in shares if s is not None) == pytest.approx(1.0)
    for share in shares:
        assert share is not None and 0.0 <= share.lo <= share.value <= share.hi <= 1.0
    with open_store(str(tmp_path / "e.db")) as st:
        sessions = [r.session for r in report.results if r.arm == "dag"]
        claims = [c for s in sessions for c in final_claims(st, s)]
        assert len(claims) == led.claims
        assert sum(c.origin.value == "single" for c in claims) / len(claims) == pytest.approx(
            led.single.value
        )
        for r in report.results:
            made = [c for c in st.calls(r.session) if not c.cache_hit]
            ledger = [c for c in made if c.phase == CallPhase.LEDGER]
            controls = [c for c in ledger if "/control/" in c.debate]
            assert (len(ledger) > len(controls)) == (r.arm == "dag")
            # single's are its answer traced against dag's sources, the control's
            assert not controls or r.arm == "single"
    # the ledger's calls are counted apart: the arm's own calls size its matched vote
    dag_calls = {r.task: 0 for r in report.results}
    assert report.spend is not None and report.spend.ledger.calls > 0
    spend = report.spend
    assert (
        spend.total.calls == spend.arms.calls + spend.ledger.calls + spend.control.calls + spend.judge.calls
    )
    assert dag.control is not None and dag.emergent_above_control is not None and spend.control.calls > 0
    # three pairs of arms on two tasks, in two orders; the fake answers a vote's sample
    # as it answers the single arm, so a pair may repeat a prompt the cache answers
    assert 0 < spend.judge.calls <= 3 * 2 * 2
    with open_store(str(tmp_path / "e.db")) as st:
        for t in dag_calls:
            dag_own = [c for c in st.calls(f"ev-dag-{t}-r0") if not c.cache_hit]
            samples = [s.id for s in st.sessions() if s.id.startswith(f"ev-dag-vote-{t}-r0-s")]
            vote_tokens = sum(c.prompt_tokens + c.completion_tokens for s in samples for c in st.calls(s))
            own = sum(c.prompt_tokens + c.completion_tokens for c in dag_own if c.phase != CallPhase.LEDGER)
            with_ledger = sum(c.prompt_tokens + c.completion_tokens for c in dag_own)
            # sized to the dag's own tokens, not to those with its ledger's
            assert abs(vote_tokens - own) < abs(vote_tokens - with_ledger), (t, own, with_ledger, vote_tokens)
    assert dag.calls + vote.calls + single.calls == report.spend.arms.calls


@pytest.mark.slow
def test_without_an_explicit_ledger_setting_no_arm_is_traced(tmp_path: Path) -> None:
    found = [Task(id="t0", question="What does the passage imply?", passage=LONG_PASSAGE)]
    report = run(tmp_path, strong(), found, "dag", BASE)  # ledger auto: off in an eval
    assert report.arms[0].ledger is None
    assert report.spend is not None and report.spend.ledger.calls == 0


# -- a long passage and a strong model's long verdicts -----------------------------------
def long_judgement(call: ScriptedCall) -> dict[str, object]:
    """A strong judge: several sentences of reasoning per criterion, then overall; its
    preference (the answer that sorts first) holds in either order."""
    a, b = answers(call)
    preferred = "A" if a < b else "B" if b < a else "tie"
    h = sum(map(ord, a[:200] + b[:200]))

    def reasoning(k: int, cap: int) -> str:
        text = " ".join(SENTENCES[(h + k + j) % len(SENTENCES)] for j in range(6))
        return text[:cap]

    criteria = [
        {"criterion": c, "reasoning": reasoning(i, 990), "verdict": preferred}
        for i, c in enumerate(("comprehensiveness", "insight", "faithfulness", "clarity"))
    ]
    return {"criteria": criteria, "reasoning": reasoning(7, 1990), "verdict": preferred}


def test_a_long_passage_with_a_strong_models_long_structured_verdicts(tmp_path: Path) -> None:
    assert len(LONG_PASSAGE.split()) >= 1200
    found = [
        Task(id="t0", question="What does the passage claim, and on what evidence?", passage=LONG_PASSAGE)
    ]
    client = strong(judge=True)
    report = run(tmp_path, client, found, "single,mca:rounds=1", BASE)
    # the judge read the whole passage and both answers whole, in both orders
    pairs = [c for c in client.calls if c.meta.phase == CallPhase.PAIR]
    assert len(pairs) == 2
    for call in pairs:
        user = call.messages[-1]["content"]
        assert LONG_PASSAGE.strip() in user
        a, b = answers(call)
        assert len(a.split()) > 150 and len(b.split()) > 150
    (overall,) = report.comparisons
    assert overall.wins + overall.losses == 1 and overall.ties == 0  # the preference held in both orders
    assert [c.criterion for c in report.criteria] == [
        "comprehensiveness",
        "insight",
        "faithfulness",
        "clarity",
    ]
    assert all((c.wins, c.losses) == (overall.wins, overall.losses) for c in report.criteria)
    with open_store(str(tmp_path / "e.db")) as st:
        judged = st.edges(EVALUATION_SESSION, EdgeType.JUDGED_AGAINST)
        assert len(judged) == 2 * 5  # both orders, overall and four criteria
        assert all(len(str(e.props["reason"])) > 400 for e in judged)  # the reasoning kept whole
    assert report.spend is not None and report.spend.judge.calls == 2
    data = json.loads(report.model_dump_json())
    assert len(data["criteria"]) == 4 and data["spend"]["judge"]["tokens"] > 1000


def test_the_dry_run_counts_the_ledger_in_the_dag_arm_only_and_sizes_its_vote_without_it(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from dagmca.cli.app import app

    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"id": "t1", "question": "What follows?", "passage": "A passage. It says two things."}\n'
    )
    args = ["eval", str(path), "--arms", "dag,dag-vote", "--llm", "fake", "--dry-run", "--json"]
    projected = {}
    for ledger in ("auto", "final"):
        done = CliRunner().invoke(app, [*args, "--ledger", ledger])
        assert done.exit_code == 0, done.output
        projected[ledger] = {a["arm"]: a["calls_max"] for a in json.loads(done.stdout)["arms"]}
    assert projected["final"]["dag"] > projected["auto"]["dag"]  # the ledger's split and verdicts
    assert projected["final"]["dag-vote"] == projected["auto"]["dag-vote"]


def test_the_noise_floor_counts_the_overall_verdicts_only(tmp_path: Path) -> None:
    report = run(tmp_path, signed(by_criterion), open_tasks(4), "single", repeats=2, noise_floor=True)
    (floor,) = report.noise_floors
    assert floor.kind == "judged"
    assert floor.wins + floor.losses + floor.ties == 4  # one per task, not one per criterion too
    assert report.criteria == []  # one arm: no pair of arms to compare


def test_a_pooled_share_is_bootstrapped_over_groups_and_seeded() -> None:
    from dagmca.evaluation.stats import bootstrap_share, wilson

    assert bootstrap_share([(2, 4)] * 5) == (0.5, 0.5)  # every task the same: no spread over tasks
    mixed = [(0, 5), (5, 5), (1, 4), (3, 3), (0, 6)]
    lo, hi = bootstrap_share(mixed, seed=1)
    assert lo < 9 / 23 < hi and (lo, hi) == bootstrap_share(mixed, seed=1)
    assert bootstrap_share([]) == (0.0, 1.0) and bootstrap_share([(0, 0)]) == (0.0, 1.0)
    lo, hi = wilson(2.5, 5)  # a fractional count (ties as half wins): centred on one half
    assert lo + hi == pytest.approx(1.0) and 0.0 < lo < 0.5
