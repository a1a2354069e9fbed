"""Which findings hold: three scripted sessions of one passage, with a known truth,
aligned into findings by a scripted judge that reads what the questions ask: exactly the
groups the truth has, nothing joined that the judge calls distinct or leaves undecided,
the cost told before the first call, nothing asked twice, nothing half-judged written."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmca.api import Workspace
from dagmca.errors import UserError
from dagmca.graph import FINDINGS_SESSION, EdgeType, NodeKind
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.stability import StabilityReport
from dagmca.stability.models import AlignCost
from dagmca.store.findings_check import check_findings
from dagmca.store.sqlite import SQLiteStore
from tests.support.stability import (
    RECURS,
    SESSIONS,
    TOPIC,
    alignment_judge,
    asked,
    copied,
    flips,
    on_model,
    run_three,
    traced,
)

EVERY_PAIR = {"duplicate_prefilter": 0.0, "candidates": 10}  # every pair is read: only the judge decides


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three sessions, run once for the module; each test works on a copy."""
    folder = tmp_path_factory.mktemp("three")
    with SQLiteStore(folder / "three.db") as store:
        store.init_schema()
        run_three(store, folder / "out")
    return folder / "three.db"


@pytest.fixture
def study(three: Path, tmp_path: Path) -> SQLiteStore:
    store = copied(three, tmp_path / "study.db")
    yield store
    store.close()


def aligned(
    store: SQLiteStore, judge: ScriptedLLM, sessions: list[str] | None = None, **kwargs: Any
) -> StabilityReport:
    async def go() -> StabilityReport:
        async with Workspace(store, embedder=HashingEmbedder()) as ws:
            return await ws.stability(sessions or list(SESSIONS), client=judge, **kwargs)

    return asyncio.run(go())


def question_of(store: SQLiteStore, member: str) -> str:
    node = store.get_node(member)
    assert node is not None
    return str(node.props["question"])


def test_three_samples_give_exactly_the_recurring_groups(study: SQLiteStore) -> None:
    judge = ScriptedLLM(alignment_judge())
    report = aligned(study, judge, **EVERY_PAIR)
    tensions = [f for f in report.findings if f.kind == "tension"]
    found = sorted(((f.k, f.n), sorted({TOPIC[question_of(study, m)] for m in f.members})) for f in tensions)
    assert found == sorted(((k, 3), [topic]) for topic, k in RECURS.items())
    assert report.core == 3 and report.once == 4 and report.written
    for f in tensions:  # every member of a finding asks what the others ask, one per session
        assert len({TOPIC[question_of(study, m)] for m in f.members}) == 1
        assert len(set(f.sessions)) == f.k and f.core == (2 * f.k >= 3)
    assert [f.k for f in report.findings] == sorted((f.k for f in report.findings), reverse=True)
    assert check_findings(study, report.study) == []
    stored = study.nodes(FINDINGS_SESSION, NodeKind.FINDING)
    assert len(stored) == len(report.findings)
    assert {(e.source, e.target) for e in study.edges(FINDINGS_SESSION, EdgeType.SEEN_IN)} == {
        (f.id, s) for f in report.findings for s in f.sessions
    }
    # every pair judged is kept, with its verdict in both orders and the judge's reason
    compared = study.edges(FINDINGS_SESSION, EdgeType.COMPARED_WITH)
    assert len(compared) == report.verdicts.compared == 3 * 4 * 4  # three pairs of sessions, 4 x 4 each
    assert all(
        e.props["reason"].startswith("scripted judge") and " | " in str(e.props["verdicts"]) for e in compared
    )


def test_a_judge_that_flips_with_the_order_merges_nothing(study: SQLiteStore) -> None:
    report = aligned(study, ScriptedLLM(alignment_judge(flips)), **EVERY_PAIR)
    assert all(f.k == 1 for f in report.findings), "no pair judged a match in one order alone is a match"
    assert report.verdicts.match == 0 and report.verdicts.undecided == report.verdicts.compared > 0
    compared = study.edges(FINDINGS_SESSION, EdgeType.COMPARED_WITH)
    assert compared and all(e.props["verdict"] == "undecided" for e in compared)
    assert all(e.props["verdicts"] in ("duplicate | distinct", "distinct | duplicate") for e in compared)
    assert all("the verdict changes with the order" in str(e.props["reason"]) for e in compared)
    assert check_findings(study, report.study) == []


def test_the_cost_is_told_before_the_first_call_and_holds(study: SQLiteStore) -> None:
    judge = ScriptedLLM(alignment_judge())
    told: list[tuple[AlignCost, int]] = []
    report = aligned(study, judge, on_estimate=lambda cost: told.append((cost, len(judge.calls))))
    [(cost, calls_then)] = told
    assert calls_then == 0, "the estimate comes before any judge call"
    assert cost.calls == len(judge.calls) == 2 * sum(cost.pairs.values()) > 0
    assert cost.prompt_tokens > 0 and cost.completion_tokens_max == cost.calls * 300
    dry = ScriptedLLM(alignment_judge())
    assert aligned(study, dry, dry_run=True).findings == [] and dry.calls == []
    assert report.spent is not None and report.spent.calls == cost.calls


def test_a_study_run_again_asks_nothing_and_writes_the_same(study: SQLiteStore) -> None:
    first = aligned(study, ScriptedLLM(alignment_judge()))
    again = ScriptedLLM(alignment_judge())
    second = aligned(study, again)
    assert again.calls == [], "every judgment is replayed from the cache"
    assert second.study == first.study and second.findings == first.findings
    assert len(study.nodes(FINDINGS_SESSION, NodeKind.FINDING)) == len(first.findings)


def test_a_study_left_half_judged_is_not_written_until_finished(study: SQLiteStore) -> None:
    cut = aligned(study, ScriptedLLM(alignment_judge()), max_llm_calls=10, **EVERY_PAIR)
    assert cut.verdicts.unjudged > 0 and not cut.written
    assert study.nodes(FINDINGS_SESSION, NodeKind.FINDING) == [], "no study is written with a pair unjudged"
    assert any("not written" in n for n in cut.notes)
    judge = ScriptedLLM(alignment_judge())
    done = aligned(study, judge, max_llm_calls=1000, **EVERY_PAIR)
    assert done.written and done.verdicts.unjudged == 0 and done.study == cut.study
    assert cut.spent is not None and 0 < cut.spent.calls <= 10
    assert len(judge.calls) == done.estimate.calls - cut.spent.calls, (
        "what the first run asked is not asked again"
    )


def test_a_study_id_given_again_for_other_sessions_is_refused(study: SQLiteStore) -> None:
    aligned(study, ScriptedLLM(alignment_judge()), study="mine", **EVERY_PAIR)
    with pytest.raises(UserError, match="already holds findings aligned from other"):
        aligned(study, ScriptedLLM(alignment_judge()), sessions=["s1", "s2"], study="mine", **EVERY_PAIR)


def test_sessions_of_two_passages_or_one_session_are_refused(study: SQLiteStore, tmp_path: Path) -> None:
    from tests.support.sessions import run_scripted, scripted

    run_scripted(study, tmp_path / "out", scripted([]), session="other", passage="Another text entirely.",
                 cpp=2, rounds=1, max_depth=0, ledger="off")  # fmt: skip
    judge = ScriptedLLM(alignment_judge())
    with pytest.raises(UserError, match="debate different passages"):
        aligned(study, judge, sessions=["s1", "other"])
    with pytest.raises(UserError, match="two or more sessions"):
        aligned(study, judge, sessions=["s1"])
    assert judge.calls == []


def test_claims_align_as_stating_the_same_thing_with_their_origins(study: SQLiteStore) -> None:
    same, other = "Pricing road space cuts congestion.", "Revenue must fund buses."
    traced(study, "s1", [same, other], origin="single")
    traced(study, "s2", [same, "Revenue must not fund buses."], origin="emergent")
    traced(study, "s3", ["Shops lose visitors."], origin="unsupported")
    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    claims = [f for f in report.findings if f.kind == "claim"]
    assert sorted((f.k, f.text) for f in claims) == [
        (1, "Revenue must fund buses."), (1, "Revenue must not fund buses."), (1, "Shops lose visitors."),
        (2, same),
    ]  # fmt: skip
    pair = next(f for f in claims if f.k == 2)
    assert pair.origins == ["single", "emergent"], "each member keeps its own ledger's support"
    shares = {(r.session, r.kind): (r.recurring, r.total) for r in report.shares}
    assert shares[("s1", "claim")] == (1, 2) and shares[("s3", "claim")] == (0, 1)
    assert check_findings(study, report.study) == []


def test_answers_align_by_the_scorer(study: SQLiteStore) -> None:
    for session, answer in zip(SESSIONS, ("-155", "The result is -155", "42"), strict=True):
        asked(study, session, "What is the result?", answer)
    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    answers = sorted((f.k, f.text) for f in report.findings if f.kind == "answer")
    # "-155" read against "The result is -155" is right, the other way round it is not:
    # a verdict that depends on which is the reference is no match
    assert answers == [(1, "-155"), (1, "42"), (1, "The result is -155")]
    asked(study, "s3", "What is the result?", "-155.")
    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    assert sorted((f.k, f.text) for f in report.findings if f.kind == "answer") == [
        (1, "The result is -155"),
        (2, "-155"),
    ]
    judged = [e for e in study.edges(FINDINGS_SESSION, EdgeType.COMPARED_WITH) if e.props["kind"] == "answer"]
    assert judged and all(e.props["method"] == "scorer" for e in judged)


def test_with_several_models_the_report_says_what_each_reaches(study: SQLiteStore) -> None:
    for session, model in zip(SESSIONS, ("model-a", "model-a", "model-b"), strict=True):
        on_model(study, session, model)
    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    reach = {m.model: m for m in report.models}
    assert set(reach) == {"model-a", "model-b"} and reach["model-a"].sessions == ["s1", "s2"]
    every = {next(f for f in report.findings if f.id == i).text for i in report.every_model}
    assert {TOPIC[t] for t in every} == {"fairness", "displacement"}, "only what all three sessions reach"


@pytest.mark.slow  # a dagmca process
def test_the_stability_command_refuses_two_passages_in_one_line(study: SQLiteStore, tmp_path: Path) -> None:
    from tests.support.cli import assert_user_error, dagmca
    from tests.support.sessions import run_scripted, scripted

    run_scripted(study, tmp_path / "out", scripted([]), session="other", passage="Another text entirely.",
                 cpp=2, rounds=1, max_depth=0, ledger="off")  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    proc = dagmca("stability", "s1", "s2", "other", "--store", str(study.path), "--llm", "fake", cwd=work)
    assert_user_error(proc, "debate different passages", work)


def exported(store: SQLiteStore, study: str, tmp_path: Path, fmt: str) -> Callable[[], str]:
    from tests.support.cli import dagmca

    out = tmp_path / f"study.{fmt}"
    proc = dagmca("export", study, "--format", fmt, "-o", str(out), "--store", str(store.path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return lambda: out.read_text(encoding="utf-8")


@pytest.mark.slow  # four dagmca processes
def test_the_findings_pass_check_and_show_in_exports_and_the_viewer(
    study: SQLiteStore, tmp_path: Path
) -> None:
    from dagmca.export.html import viewer_data
    from dagmca.store.findings import study_records
    from tests.support.cli import dagmca

    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    checked = dagmca("check", report.study, "--store", str(study.path), cwd=tmp_path)
    assert checked.returncode == 0 and checked.stdout.startswith("ok:"), checked.stdout + checked.stderr
    graph = json.loads(exported(study, report.study, tmp_path, "json")())
    findings = [n for n in graph["nodes"] if n["kind"] == "Finding"]
    assert sorted((n["k"], n["n"]) for n in findings) == sorted((f.k, f.n) for f in report.findings)
    assert {"SEEN_IN", "AS", "COMPARED_WITH"} <= {e["type"] for e in graph["edges"]}
    whole = json.loads(exported(study, "--all", tmp_path, "json")())  # export --all holds them too
    assert sum(1 for n in whole["nodes"] if n["kind"] == "Finding") == len(findings)
    data = viewer_data(report.study, *study_records(study, report.study))
    shown = {n["id"]: n for n in data["nodes"] if n["kind"] == "Finding" and n["shown"]}
    assert len(shown) == len(findings), "the viewer draws the findings when it opens"
    assert {n["caption"].split(":")[0] for n in shown.values()} == {
        "3 of 3 runs",
        "2 of 3 runs",
        "1 of 3 runs",
    }
    assert "3 of 3 runs" in exported(study, report.study, tmp_path, "html")()


def test_a_session_s_metrics_say_what_of_it_recurs(study: SQLiteStore) -> None:
    from dagmca.stability.measures import session_recurrence

    report = aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    [s1] = session_recurrence(study.nodes(FINDINGS_SESSION, NodeKind.FINDING), "s1")
    assert (s1.study, s1.kind, s1.recurring, s1.total) == (report.study, "tension", 3, 4)
    assert s1.share == 0.75 and 0 < s1.lo < 0.75 < s1.hi <= 1
    overlap = next(o for o in report.overlaps if (o.first, o.second, o.kind) == ("s1", "s2", "tension"))
    assert (
        (overlap.shared, overlap.union) == (3, 5) and overlap.jaccard == 0.6 and overlap.lo < 0.6 < overlap.hi
    )


def test_ask_cites_a_finding_s_recurrence_beside_it(study: SQLiteStore) -> None:
    aligned(study, ScriptedLLM(alignment_judge()), **EVERY_PAIR)
    fair = next(
        t.id for t in study.nodes("s2", NodeKind.TENSION) if TOPIC[str(t.props["question"])] == "fairness"
    )

    def answers(call: Any) -> Any:
        said = {"text": "The charge is unfair to the low paid.", "cites": [fair]}
        return {"supported": "yes", "statements": [said], "unsettled": ""}

    model = ScriptedLLM(answers)

    async def go() -> Any:
        async with Workspace(study, embedder=HashingEmbedder()) as ws:
            return await ws.ask(
                "Is a flat charge unfair to drivers on low wages?", sessions="all", client=model
            )

    answer = asyncio.run(go())
    [cited] = answer.citations
    assert cited.id == fair and cited.recurrence == "in 3 of 3 runs" and "in 3 of 3 runs" in cited.label
    prompt = model.calls[0].prompt
    assert (
        f"Node {fair} — " in prompt
        and "recurs in 3 of 3 runs" in prompt
        and "Recurring is not being right" in prompt
    )


def test_each_sample_s_settings_differ_as_asked_and_are_its_own() -> None:
    from dagmca.config import SessionConfig
    from dagmca.stability.samples import sample_settings

    base = SessionConfig(llm="fake", seed=7, temperature=0.3)
    seeds = sample_settings(base, 3)
    assert [c.seed for c in seeds] == [7, 8, 9] and {c.temperature for c in seeds} == {0.3}
    assert {c.agent_memory for c in seeds} == {"session"}, "no sample learns from another"
    assert [c.temperature for c in sample_settings(base, 3, "temperature")] == [0.2, 0.6, 1.0]
    assert [c.temperature for c in sample_settings(base, 3, "temperature", temperatures=[0.5, 0.9])] == [
        0.5,
        0.9,
        0.5,
    ]
    assert [c.model for c in sample_settings(base, 3, "model", models=["a", "b"])] == ["a", "b", "a"]
    for bad, message in (
        ({"samples": 1}, "2 or more"),
        ({"samples": 2, "vary": "model", "models": ["a"]}, "two or more models"),
        ({"samples": 2, "models": ["a", "b"]}, "--models is for --vary model"),
    ):
        with pytest.raises(UserError, match=message):
            sample_settings(base, **bad)  # type: ignore[arg-type]


def test_run_samples_records_each_sample_s_settings(tmp_path: Path) -> None:
    from tests.support.sessions import PASSAGE, lens_by_lens, scripted

    async def go() -> StabilityReport:
        async with Workspace(tmp_path / "s.db", embedder=HashingEmbedder()) as ws:
            model = ScriptedLLM(lens_by_lens(scripted(["Is a flat charge fair to low wage workers?"] * 40)))
            return await ws.run_samples(
                PASSAGE, samples=2, vary="temperature", temperatures=[0.4, 0.9], client=model,
                settings={"llm": "fake", "cpp": 2, "rounds": 1, "max_depth": 0, "ledger": "off"},
            )  # fmt: skip

    report = asyncio.run(go())
    assert [(s.sample, s.temperature, s.seed, s.ran, s.status) for s in report.samples] == [
        (1, 0.4, 0, True, "done"), (2, 0.9, 1, True, "done"),
    ]  # fmt: skip
    with SQLiteStore(tmp_path / "s.db") as store:
        for s in report.samples:
            node = store.get_node(s.session)
            assert node is not None and json.loads(str(node.props["config"]))["temperature"] == s.temperature
        assert report.written and check_findings(store, report.study) == []
    assert [(f.kind, f.k, f.n) for f in report.findings] == [("tension", 2, 2)], (
        "one question, in both samples"
    )
    again = asyncio.run(go())
    assert not any(s.ran for s in again.samples) and again.findings == report.findings


@pytest.mark.slow  # the openai SDK and the price table load
def test_samples_share_one_backend_across_seeds_and_one_limiter_across_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagmca.config import SessionConfig
    from dagmca.stability.samples import SampleRuns, sample_settings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-limits")
    base = SessionConfig(llm="openai", model="m-a", base_url="http://127.0.0.1:9/v1", rpm=60)
    by_seed = sample_settings(base, 2)
    by_model = sample_settings(base, 2, "model", models=["m-a", "m-b"])

    async def go() -> list[Any]:
        async with Workspace(tmp_path / "w.db", embedder=HashingEmbedder()) as ws:
            runs = SampleRuns(ws, base, None)
            return [(await runs.backend(c)).client for c in [*by_seed, *by_model]]

    seed_one, seed_two, model_a, model_b = asyncio.run(go())
    assert seed_one is seed_two, "the seed goes with each request: one backend"
    assert model_a is not model_b and model_a.limiter is model_b.limiter, "one endpoint, one rate limit"


def test_an_unfinished_session_is_no_sample(study: SQLiteStore) -> None:
    node = study.get_node("s3")
    assert node is not None
    study.write([node.model_copy(update={"props": {**node.props, "status": "interrupted"}})])
    with pytest.raises(UserError, match="s3 is not finished"):
        aligned(study, ScriptedLLM(alignment_judge()))


def test_groups_join_no_chain_through_a_third_and_stay_quick_under_a_permissive_judge() -> None:
    import time

    from dagmca.graph import AlignVerdict, DecisionMethod, FindingKind
    from dagmca.stability.grouping import groups
    from dagmca.stability.judging import Judged
    from dagmca.stability.members import Member

    def member(session: str, i: int) -> Member:
        return Member(f"{session}/t{i}", session, FindingKind.TENSION, f"question {i}")

    def judged(a: Member, b: Member, verdict: AlignVerdict, similarity: float = 0.8) -> Judged:
        return Judged(a, b, verdict, "scripted", similarity, DecisionMethod.LLM)

    a, b, c = member("s1", 1), member("s2", 1), member("s3", 1)
    chain = [
        judged(a, b, AlignVerdict.MATCH, 0.9),
        judged(b, c, AlignVerdict.MATCH),
        judged(a, c, AlignVerdict.DISTINCT),
    ]
    assert [[m.id for m in g] for g in groups([a, b, c], chain)] == [["s1/t1", "s2/t1"], ["s3/t1"]]
    undecided = [*chain[:2], judged(a, c, AlignVerdict.UNDECIDED)]
    assert len(groups([a, b, c], undecided)) == 2, "an undecided pair is no match either"

    # a judge that calls everything a match: four samples of forty members, every pair (as
    # many ways to cut them into groups as 40^4 cliques: none is enumerated)
    members = [member(f"s{s}", i) for s in range(4) for i in range(40)]
    every = [judged(x, y, AlignVerdict.MATCH) for x in members for y in members if x.session < y.session]
    started = time.process_time()
    found = groups(members, every)
    assert time.process_time() - started < 2
    assert len(found) == 40 and all(len({m.session for m in g}) == len(g) == 4 for g in found)
