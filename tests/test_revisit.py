"""`dagmca revisit`: later, with new context, open stubs are checked again, relevant
ones explored into the same DAG, and the session integrated again."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.debate.dag import stubs
from dagmca.debate.session import RevisitOutcome
from dagmca.debate.state import SessionState
from dagmca.graph import DebateNode, DebateOrigin, EdgeType, TensionNode, TensionStatus
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import SessionMode, revisit_and_report
from tests.support.cli import dagmca
from tests.support.criteria import responder
from tests.support.judges import judge_reply, stub_parts
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE, QUESTIONS, RunSession, excerpt_of, lens_by_lens


def test_revisit_explores_a_stub_the_new_context_makes_relevant(
    run_fake: RunSession, store: SQLiteStore, tmp_path: Path
) -> None:
    settings = dict(max_branches=2, max_depth=1, rounds=1, strategy="urgent", monitor_every="turn")
    _, first, _ = run_fake(responder, max_revisits=0, **settings)
    stub = next(t for t in first.graph.tensions.values() if t.question == QUESTIONS[4])
    assert stub.status is TensionStatus.STUB
    debates_before = set(first.graph.debates)

    cfg = SessionConfig(llm="fake", max_revisits=1, **settings)
    context = f"{QUESTIONS[4]}? New polls after the first month say yes."

    async def go() -> tuple[RevisitOutcome, SessionState]:
        async with open_state(
            cfg,
            store,
            client=ScriptedLLM(lens_by_lens(responder)),
            session_id="s1",
            passage=PASSAGE,
            embedder=HashingEmbedder(),
            mode=SessionMode.REVISIT,
        ) as state:
            return await revisit_and_report(state, context=context, out_dir=tmp_path), state

    result, state = asyncio.run(go())

    assert result.explored == [f"{stub.id}/revisit"] and result.checked >= 1
    branch = state.graph.debates[result.explored[0]]
    assert branch.origin is DebateOrigin.REVISIT and set(state.graph.debates) > debates_before
    edges = {(e.source, e.target, e.type) for e in store.edges("s1")}
    assert (branch.id, "s1/main", EdgeType.BRANCHES_FROM) in edges
    assert (branch.id, stub.id, EdgeType.EXPLORES) in edges
    stored = store.get_node(stub.id)
    assert stored is not None and stored.props["status"] == "explored"
    checks = json.loads(str(stored.props["revisit_checks"]))
    assert checks[-1]["after"] == "s1/final" and checks[-1]["outcome"] == "relevant"
    assert ("s1/final", branch.id, EdgeType.INTEGRATES) in edges  # integrated again
    assert check_store(store, "s1") == []


@pytest.mark.slow
def test_revisit_from_the_command_line(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    run = dagmca(
        "run",
        str(passage),
        "--llm",
        "fake",
        "--session",
        "rv",
        "--quiet",
        "--max-depth",
        "1",
        "--max-revisits",
        "0",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    news = tmp_path / "news.txt"
    news.write_text(
        "A year later the charge is law; revenue funds buses; traffic fell by a fifth.", encoding="utf-8"
    )
    proc = dagmca("revisit", "rv", "--passage", str(news), "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "revisited rv:" in proc.stdout and "open stubs checked against the new passage" in proc.stdout
    assert dagmca("check", "rv", cwd=tmp_path).returncode == 0
    missing = dagmca("revisit", "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "no session" in missing.stderr


def test_a_levels_stub_checks_are_judged_together_and_applied_in_order(store: SQLiteStore) -> None:
    """After a level of branches, every new branch is checked against the stubs open
    before the first of them, with all the judge calls at once; verdicts apply branch
    by branch: a stub the first answered is not checked against the second, a stub both
    make relevant is explored once."""
    answered, wanted, other = (
        "Would suburban shops lose trade?",
        "Are the polls reliable?",
        "Who pays for the buses?",
    )

    def rule(question: str, text: str) -> tuple[str, str]:
        if question == answered:
            return "answered", text.split(". ")[0] + "."
        return ("relevant", "") if question == wanted else ("open", "")

    def reply(call: ScriptedCall) -> Any:
        return judge_reply(call, stub=rule)

    cfg = SessionConfig(llm="fake", max_revisits=2, max_depth=2, stub_prefilter=0.0, concurrency=8)

    fake = ScriptedLLM(reply, delay=0.2)

    async def go() -> tuple[list[TensionNode], SessionState]:
        async with open_state(
            cfg, store, client=fake, session_id="lv", passage=PASSAGE, embedder=HashingEmbedder(),
        ) as st:  # fmt: skip
            parent = DebateNode(id="lv/main", session="lv", origin=DebateOrigin.MAIN, question="q", depth=0)
            flags = [
                TensionNode(id=f"lv/main/t{i}", session="lv", debate=parent.id, question=q, urgency=0.5,
                            rationale="r", excerpt="e", observer="skeptical", category="gap")
                for i, q in enumerate((answered, wanted, other))
            ]  # fmt: skip
            branches = [
                DebateNode(id=f"lv/main/b{i}", session="lv", origin=DebateOrigin.BRANCH, question=f"b{i}",
                           depth=1, resolution=f"Shops lose some trade, branch {i}. More follows.")
                for i in (1, 2)
            ]  # fmt: skip
            st.write([parent, *flags, *branches])
            made = await stubs.check(st, [(b, b.resolution) for b in branches], lambda _: True)
            return made, st

    made, st = asyncio.run(go())
    assert [t.question for t in made] == [wanted] and st.counts.revisits_used == 1
    first, second = (f"lv/main/b{i}" for i in (1, 2))
    by_question = {t.question: t for t in st.graph.tensions.values()}
    assert [c.after for c in by_question[answered].revisit_checks] == [first]
    assert by_question[answered].status is TensionStatus.SUPERSEDED
    assert [c.after for c in by_question[wanted].revisit_checks] == [first]
    assert [c.after for c in by_question[other].revisit_checks] == [first, second]
    # in flight together, not one branch's three after the other's (a count, not a time
    # a busy machine could stretch)
    assert len(fake.calls) == 6 and fake.max_in_flight == 6, "the level's checks asked at once"


def _converging(call: ScriptedCall) -> Any:
    """Every pair of sibling branches converges (the same resolution); each parent's
    synthesis names the parent; observers flag a question per debate."""
    verdict = judge_reply(call)
    if verdict is not None:
        return verdict
    debate = call.meta.debate
    if call.schema is not None:
        h = hashlib.sha256(call.prompt.encode()).digest()
        words = ("buses", "shops", "workers", "tolls", "parks", "schools")
        asks = ("Who pays for the {}?", "When do the {} change?", "Why would the {} object?")
        question = asks[debate.count("/") - 1].format(words[h[0] % 6])
        return {
            "category": "gap",
            "urgency": 0.5,
            "question": question,
            "excerpt": excerpt_of(call),
            "rationale": "r",
        }
    if call.meta.agent == "merger":
        return f"The branches of {debate} agree: fares fund buses."
    return "Fares fund buses."


def test_the_syntheses_of_every_level_are_checked_in_one_round(run_fake: RunSession) -> None:
    # a synthesis at each level (main's branches, and a branch's sub-branches): their
    # stub checks go out together once the DAG is done, not one level after the other
    spans: dict[str, list[tuple[float, float]]] = {}

    def timed(call: ScriptedCall) -> float:
        if "New text: synthesis" in call.prompt:
            _, text = stub_parts(call.prompt)
            now = time.monotonic()
            spans.setdefault(text, []).append((now, now + 0.05))
            return 0.05
        return 0.001

    result, state, _ = run_fake(
        _converging, delay=timed, max_branches=2, max_depth=2, rounds=1, monitor_every="turn",
        pair_prefilter=0.0, stub_prefilter=0.0, max_revisits=0, concurrency=64,
    )  # fmt: skip
    assert result.session.status == "done"
    parents = sorted({s.id.rsplit("/", 1)[0] for s in state.graph.syntheses.values()}, key=len)
    assert len(parents) >= 2 and parents[0].endswith("/main")  # a synthesis below main too
    top = next(t for t in spans if f"branches of {parents[0]} " in t)
    deeper = next(t for t in spans if f"branches of {parents[-1]} " in t)
    # the top level's checks began before the deeper level's had all finished
    assert min(s for s, _ in spans[top]) < max(e for _, e in spans[deeper])


def test_a_revisit_rebuilds_the_contradictions_so_its_final_gives_both_positions(
    run_fake: RunSession, store: SQLiteStore, tmp_path: Path
) -> None:
    """b1 and b3 were judged to contradict in the first run: the revisit reloads the pair
    from its CONTRADICTS edge, and a final integrated after it gives both positions."""
    from dagmca.debate.dag.integrator import integrate
    from dagmca.graph import CallPhase
    from tests.support.sessions import CHANGES, LOWERS, RAISES, scripted

    def rule(a: str, b: str) -> str:
        pair = {a, b}
        if pair == {RAISES, CHANGES}:
            return "converge"
        return "contradict" if pair == {RAISES, LOWERS} else "unrelated"

    answers = {QUESTIONS[0]: RAISES, QUESTIONS[1]: CHANGES, QUESTIONS[2]: LOWERS}
    respond = scripted(QUESTIONS[:3], answers, pair=rule)
    settings: dict[str, Any] = dict(max_branches=3, max_depth=1, rounds=1)
    _, first, _ = run_fake(respond, max_revisits=0, **settings)
    [judged] = first.graph.contradictions
    fake = ScriptedLLM(lens_by_lens(respond))

    async def go() -> SessionState:
        cfg = SessionConfig(llm="fake", cache=False, max_revisits=1, **settings)
        async with open_state(
            cfg,
            store,
            client=fake,
            session_id="s1",
            passage=PASSAGE,
            embedder=HashingEmbedder(),
            mode=SessionMode.REVISIT,
        ) as state:
            await revisit_and_report(state, context="Nothing new about prices.", out_dir=tmp_path)
            await integrate(state, state.graph.debates["s1/main"])
            return state

    state = asyncio.run(go())
    assert [(a.id, b.id) for a, b, _ in state.graph.contradictions] == [(judged[0].id, judged[1].id)]
    [final] = [c for c in fake.calls if c.meta.phase == CallPhase.FINAL][-1:]
    assert "[C1] Unreconciled" in final.prompt
    assert RAISES in final.prompt and LOWERS in final.prompt
