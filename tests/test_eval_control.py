"""The ledger in an eval, against its control: each traced arm's claims by origin with
intervals over tasks, the single arm's answers traced against that arm's sources (the
control), the arm's emergent share above the control's with its interval, the
control's calls charged apart and projected by the dry run, what every arm's finals
cite, and a finished eval run again that asks nothing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dagmca.cli import console
from dagmca.cli.app import app
from dagmca.cli.eval_report import show_report
from dagmca.config import SessionConfig
from dagmca.evaluation import Task, parse_arms
from dagmca.evaluation.assemble import unscored
from dagmca.evaluation.compare import read_result
from dagmca.evaluation.notices import NoticeKind
from dagmca.evaluation.plan import EvalPlan
from dagmca.evaluation.stats import difference_interval, wilson
from dagmca.graph import CallPhase, ClaimOrigin
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.store import open_store
from tests.support.evals import run
from tests.support.judges import ledger_reply, sentences_of
from tests.support.ledger import SAID, A, B, C, debate, judge_rule
from tests.support.sessions import PASSAGE

DRAWN = "Night buses paid for by the charge would offset what a flat charge takes from a cleaner's wage."
UNSAID = "Cities should pilot the charge for a year before holding a binding referendum."
DEBATE_FINAL = f"{A} {DRAWN}"  # one specialist's point, and what two specialists' points support
LONE_FINAL = f"{A} {UNSAID}"  # the lone agent: a point a specialist of the debate made, and its own
# a main debate of two specialists under the root, two rounds, no observers
BASE = SessionConfig.model_validate(
    {"llm": "fake", "cpp": 2, "depth": 2, "rounds": 2, "monitor_every": "off"}
)
ARMS = "mca:ledger=final,single"
TRACED = "mca:ledger=final"


def drawn(claim: str, texts: list[str]) -> list[tuple[int, str]]:
    """DRAWN follows from B (L1N1's) and C (L1N2's) together; nothing else follows."""
    if claim != DRAWN:
        return []
    return [(i, s) for i, t in enumerate(texts) for s in (B, C) if i and s in t]


def scripted() -> ScriptedLLM:
    """Every session's turns as SAID (each session counted apart), the debate's final
    and the lone agent's, and the ledger's judge reading the texts."""
    sessions: dict[str, Any] = {}

    def respond(call: ScriptedCall) -> Any:
        traced = ledger_reply(call, sentences_of, judge_rule(), drawn)
        if traced is not None:
            return traced
        sid = call.meta.debate.split("/")[0]
        final = LONE_FINAL if "-single-" in sid else DEBATE_FINAL
        return sessions.setdefault(sid, debate(SAID, final, judge_rule(), drawn))(call)

    return ScriptedLLM(respond)


def tasks(n: int) -> list[Task]:
    return [
        Task(id=f"t{i}", question="Should cities price road space?", passage=PASSAGE, answer="yes")
        for i in range(n)
    ]


def nothing(call: ScriptedCall) -> object:
    raise AssertionError(f"a finished eval asked again: {call.meta}")


@pytest.mark.slow  # two tasks, two arms, the ledger and its control, then the rerun
def test_each_traced_arm_is_read_against_the_single_arms_answers_traced_on_its_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, _ = run(tmp_path, scripted(), tasks(2), ARMS, BASE)
    data = json.loads(report.model_dump_json())
    mca, single = data["arms"]
    # the arm's own claims: one a specialist stated, one that two specialists' points support
    led = mca["ledger"]
    assert (led["sessions"], led["claims"], led["untraced"]) == (2, 4, 0)
    assert set(led) >= {o.value for o in ClaimOrigin}  # every origin, the integrator's too
    assert led["single"]["value"] == led["emergent"]["value"] == 0.5 and led["integrator"]["value"] == 0.0
    assert all(led[o.value]["lo"] <= led[o.value]["value"] <= led[o.value]["hi"] for o in ClaimOrigin)
    # the control: the lone agent's answer against the debate's sources, which it never read:
    # its point the debate's specialist made is `single` there, its own is unsupported
    control = mca["control"]
    assert (control["sessions"], control["claims"]) == (2, 4)
    assert control["single"]["value"] == control["unsupported"]["value"] == 0.5
    assert control["emergent"]["value"] == 0.0
    assert single["ledger"] is None and single["control"] is None  # the lone agent's own final is not traced
    above = mca["emergent_above_control"]
    assert above["value"] == pytest.approx(0.5) and above["tasks"] == 2 and above["few_tasks"]
    # every task alike: the bootstrap cannot vary, so Newcombe's interval over two tasks holds it
    assert -1.0 <= above["lo"] < 0.0 < 0.5 < above["hi"] <= 1.0
    # the traced arm's comparison with the control's arm carries the same difference
    against = [c for c in data["comparisons"] if {c["arm"], c["baseline"]} == {TRACED, "single"}]
    assert against and all(c["emergent_above_control"] == above for c in against)
    assert [(c["arm"], c["task"], c["session"], c["against"]) for c in data["controls"]] == [
        (TRACED, f"t{i}", f"ev-single-t{i}-r0", f"ev-mca_ledger_final-t{i}-r0") for i in range(2)
    ]
    # its calls: recorded under the lone agent's session, counted as the control's (not as
    # single's, nor as the arm's ledger), within the eval's spend
    with open_store(str(tmp_path / "e.db")) as st:
        lone = [c for i in range(2) for c in st.calls(f"ev-single-t{i}-r0") if not c.cache_hit]
        traced = [c for i in range(2) for c in st.calls(f"ev-mca_ledger_final-t{i}-r0") if not c.cache_hit]
    made = [c for c in lone if c.phase == CallPhase.LEDGER]
    assert made and all("/control/ev-mca_ledger_final-" in c.debate for c in made)
    spend = report.spend
    assert spend is not None and spend.control.calls == len(made) == sum(c["calls"] for c in data["controls"])
    assert single["calls"] == len(lone) - len(made)
    assert spend.ledger.calls == sum(1 for c in traced if c.phase == CallPhase.LEDGER)
    assert (
        spend.total.calls == spend.arms.calls + spend.ledger.calls + spend.control.calls + spend.judge.calls
    )
    # the terminal report shows the shares, the control under its arm and the difference
    # a row, a line (the console, made at import, reads COLUMNS once: set its width itself)
    monkeypatch.setattr(console.out, "width", 400)
    show_report(report)
    shown = capsys.readouterr().out.splitlines()
    (control_row,) = [line for line in shown if "control of mca:ledger=final" in line]
    assert control_row.count("50.0% [") == 2 and "integrator" in "".join(shown)
    (line,) = [line for line in shown if "points above the control" in line]
    assert line.startswith(
        "mca:ledger=final: emergent 50.0%, its control's 0.0%: +50.0 points above the control ["
    )
    assert any(f"ledger's control {spend.control.calls}," in line for line in shown)
    # a finished eval run again asks nothing, the control included, and reports the same
    again, _ = run(tmp_path, ScriptedLLM(nothing), tasks(2), ARMS, BASE)
    assert again.model_dump(exclude={"results"}) == report.model_dump(exclude={"results"})


def test_the_dry_run_projects_each_traced_arms_control_into_the_total(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"id": "t1", "question": "What follows?", "passage": "A passage. It says two things."}\n'
    )

    def projected(arms: str, ledger: str) -> dict[str, Any]:
        args = ["eval", str(path), "--arms", arms, "--llm", "fake", "--dry-run", "--json", "--ledger", ledger]
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    traced = projected("dag,single", "final")
    (control,) = traced["controls"]
    assert control["arm"] == "dag" and control["sessions"] == 1
    assert 1 <= control["calls_min"] < control["calls_max"]  # the split, and at most 3 checks a claim
    arms = sum(a["calls_max"] - a["shared"] for a in traced["arms"])
    assert traced["calls_max"] == arms + traced["judge_calls"] + control["calls_max"]
    assert projected("dag", "final")["controls"] == []  # no single arm: nothing to trace as the control
    assert projected("dag,single", "auto")["controls"] == []  # the ledger off: no control


def test_a_traced_arm_without_a_single_arm_is_said_to_have_no_control() -> None:
    base = BASE.model_dump()
    plan = EvalPlan(eval_id="ev", tasks=tasks(1), arms=parse_arms("mca:ledger=final,decompose", base))
    (notice,) = unscored(plan, BASE)
    assert notice.kind is NoticeKind.NO_CONTROL and notice.arms == [TRACED]
    with_single = EvalPlan(eval_id="ev", tasks=tasks(1), arms=parse_arms(ARMS, base))
    assert unscored(with_single, BASE) == []


def cites(call: ScriptedCall) -> object:
    """A final that cites the main debate in its first claim, a section it was not given in
    its second (removed), and nothing in its third."""
    if call.schema is None and call.meta.phase == CallPhase.FINAL:
        return "Road pricing cuts traffic [M]. Buses gain riders [B7]. Fares should fall."
    return default_responder(call)


def test_each_arm_reports_its_cited_share_and_the_citations_removed(tmp_path: Path) -> None:
    report, _ = run(tmp_path, ScriptedLLM(cites), tasks(2), "single", BASE)
    (single,) = report.arms
    c = single.citations
    assert c is not None and (c.sessions, c.claims, c.uncited, c.removed) == (2, 6, 4, 2)
    assert c.cited.value == pytest.approx(1 / 3) and c.cited.lo < 1 / 3 < c.cited.hi
    assert json.loads(report.model_dump_json())["arms"][0]["citations"]["cited"]["hi"] == c.cited.hi


def test_a_result_file_of_the_layout_before_reads_with_no_control(tmp_path: Path) -> None:
    report, _ = run(tmp_path, ScriptedLLM(cites), tasks(1), "single", BASE)
    data = json.loads(report.model_dump_json())
    data["schema_version"] = 2  # the layout before: no control, citations or integrator share
    del data["controls"], data["spend"]["control"]
    for arm in data["arms"]:
        del arm["control"], arm["emergent_above_control"], arm["citations"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    old = read_result(path)
    assert old.schema_version == 2 and old.arms[0].control is None and old.spend is not None
    assert old.spend.control.calls == 0


def test_the_difference_of_two_shares_is_paired_by_task_and_widened_on_few_tasks() -> None:
    # ten tasks that differ: the paired bootstrap alone, around the pooled difference
    varied = [
        (k, 4, j, 4)
        for k, j in zip([1, 2, 0, 3, 2, 1, 4, 2, 1, 3], [0, 1, 1, 0, 2, 0, 1, 1, 0, 2], strict=True)
    ]
    lo, hi, few = difference_interval(varied, seed=3)
    value = sum(g[0] for g in varied) / 40 - sum(g[2] for g in varied) / 40
    assert not few and lo < value < hi and (lo, hi, few) == difference_interval(varied, seed=3)
    # pairing: a task's two shares drawn together, so tasks whose levels lie far apart
    # but whose differences agree give a difference surely above 0
    paired = [(1, 4, 0, 4), (4, 4, 3, 4), (2, 4, 0, 4), (4, 4, 2, 4)] * 3
    p_lo, p_hi, few = difference_interval(paired)
    assert not few and 0.0 < p_lo < 0.375 < p_hi
    # two tasks, every one alike: Newcombe's interval from Wilson's over the two tasks
    lo, hi, few = difference_interval([(2, 4, 0, 4), (1, 2, 0, 3)])
    (a_lo, a_hi), (_, b_hi) = wilson(1.0, 2), wilson(0.0, 2)
    assert few and lo == pytest.approx(0.5 - ((0.5 - a_lo) ** 2 + b_hi**2) ** 0.5) and lo < 0.0
    assert hi == pytest.approx(a_hi)
    assert difference_interval([]) == (-1.0, 1.0, True)


def test_every_claim_origin_has_its_share_in_the_report() -> None:
    from dagmca.evaluation.origins import ledger_of

    led = ledger_of([("t0", Counter(o.value for o in ClaimOrigin), 0)])
    assert led is not None and [o for o, _ in led.by_origin()] == list(ClaimOrigin)
    assert all(s is not None and s.value == pytest.approx(1 / len(ClaimOrigin)) for _, s in led.by_origin())
