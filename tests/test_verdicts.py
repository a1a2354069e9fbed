"""Judged decisions in a run and in its summary, on the scripted fake: a branch's flag that
restates the question the branch explores goes to the judge (duplicate: merged into the
explored tension; distinct: kept), not to the guard's count of shared words; with
--judge embedding the guard's drop stands; the summary lists each verdict with its reason."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from dagmca.api import RunResult, Workspace
from dagmca.cli import run as run_cli
from dagmca.cli.verdicts import Verdicts
from dagmca.config import SessionConfig
from dagmca.graph import EdgeType, TensionStatus
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.prompts.schemas import DuplicateVerdict
from dagmca.prompts.templates import observer_scaffolding
from dagmca.reports import quality
from dagmca.similarity import HashingEmbedder
from dagmca.store import open_store
from dagmca.store.check import check_store
from tests.support.judges import judge_reply
from tests.support.sessions import PASSAGE, RunSession, excerpt_of, flag, lens_by_lens

QUESTION = "Who pays for the upkeep of the street trees?"
RESTATED = "Who pays for the upkeep of the city's trees?"  # most of its wording is the branch's question
SETTINGS: dict[str, Any] = {
    "rounds": 1,
    "max_branches": 1,
    "max_depth": 1,
    "max_revisits": 0,
    "observers": ("skeptical",),
}


def responder(same: bool) -> Any:
    """The main debate's observer flags QUESTION, the branch's restate it; the judge
    finds the two the same question when `same`."""

    def respond(call: ScriptedCall) -> Any:
        verdict = judge_reply(call, duplicate=lambda a, b: same)
        if verdict is not None:
            return verdict
        if call.schema is not None:
            return flag(
                QUESTION if call.meta.debate.endswith("/main") else RESTATED, excerpt=excerpt_of(call)
            )
        return f"{call.meta.agent} says something about {call.meta.phase} number {len(call.prompt) % 97}."

    return respond


def test_a_branch_flag_restating_its_question_is_judged_a_duplicate(run_fake: RunSession) -> None:
    verdicts = Verdicts()
    _, state, fake = run_fake(responder(same=True), events=verdicts, **SETTINGS)
    explored = next(t for t in state.graph.tensions.values() if t.question == QUESTION)
    assert explored.status is TensionStatus.EXPLORED
    judged = [c for c in fake.calls if c.schema is DuplicateVerdict]
    assert len(judged) == 1, "the branch's later restatements are the judged one's, not judged again"
    restated = [t for t in state.graph.tensions.values() if t.question == RESTATED]
    assert len(restated) == 1 and restated[0].status is TensionStatus.DUPLICATE
    assert restated[0].duplicate_of == explored.id
    (edge,) = state.handles.store.edges("s1", EdgeType.DUPLICATES)
    assert (edge.source, edge.target) == (restated[0].id, explored.id)
    assert edge.props["verdict"] == "duplicate" and edge.props["method"] == "llm"
    assert edge.props["reason"] == "scripted judge: duplicate"
    # the explored tension is flagged at the branch's turns that raised it again
    assert any(f.split("@", 1)[1].startswith("s1/main/b1/") for f in explored.flags)
    assert state.counts.dropped_tensions == 0
    (line,) = verdicts.lines
    assert "duplicate, merged (llm" in line and "scripted judge: duplicate" in line
    assert check_store(state.handles.store, "s1") == []


def test_a_restating_flag_the_judge_finds_distinct_is_kept(run_fake: RunSession) -> None:
    verdicts = Verdicts()
    _, state, _ = run_fake(responder(same=False), events=verdicts, **SETTINGS)
    restated = [t for t in state.graph.tensions.values() if t.question == RESTATED]
    assert len(restated) == 1 and restated[0].status is TensionStatus.STUB
    # the graph says why a flag the guard would have dropped stands: the judge's reason
    assert "scripted judge: distinct" in restated[0].kept_reason
    assert "s1/main" in restated[0].kept_reason
    assert not state.handles.store.edges("s1", EdgeType.DUPLICATES)
    assert any("distinct (llm" in line and "scripted judge: distinct" in line for line in verdicts.lines)
    assert check_store(state.handles.store, "s1") == []
    assert all(not t.kept_reason for t in state.graph.tensions.values() if t.question != RESTATED)


@pytest.mark.parametrize("same", [True, False])
def test_the_quality_report_counts_a_judged_restatement_as_no_echo(run_fake: RunSession, same: bool) -> None:
    """A branch's flag in its own question's words was judged (a duplicate, or kept as
    distinct with the reason): the readability report does not count it as an echo of the
    prompt; a question echoing the observers' instructions still is one."""
    _, state, _ = run_fake(responder(same=same), **SETTINGS)
    nodes = [{"id": n.id, "kind": n.kind.value, **n.props} for n in state.handles.store.nodes("s1")]
    assert quality.report(nodes)["tensions"]["echoing"] == 0
    restated = next(n for n in nodes if n.get("question") == RESTATED)
    assert (
        quality.report([*nodes, {**restated, "kept_reason": "", "status": "stub"}])["tensions"]["echoing"]
        == 1
    )
    instructions = observer_scaffolding("")
    echo = {**restated, "id": "x", "question": instructions[:200]}
    assert quality.report([*nodes, echo])["tensions"]["echoing"] == 1
    # a duplicate of some other question is no judgement on restating the branch's own
    other = {"id": "o", "kind": "Tension", "debate": restated["debate"], "question": "Who plants the trees?"}
    twin = {**restated, "id": "y", "kept_reason": "", "status": "duplicate", "duplicate_of": "o"}
    assert quality.report([*nodes, other, twin])["tensions"]["echoing"] == 1


def test_without_the_judge_the_guard_drops_a_restating_flag(run_fake: RunSession) -> None:
    verdicts = Verdicts()
    _, state, fake = run_fake(responder(same=True), events=verdicts, judge="embedding", **SETTINGS)
    assert not [c for c in fake.calls if c.schema is DuplicateVerdict]
    assert not [t for t in state.graph.tensions.values() if t.question == RESTATED]
    assert state.counts.dropped_tensions >= 1
    assert verdicts.lines == []
    assert verdicts.text().startswith("none this run")


def test_the_summary_prints_each_judged_decision(tmp_path: Path, monkeypatch: Any) -> None:
    """`dagmca run`'s summary: the verdict and the judge's reason, beside the counts."""
    store_path = tmp_path / "s.db"
    verdicts = Verdicts()
    cfg = SessionConfig(llm="fake", cache=False, **SETTINGS)

    async def main() -> RunResult:
        async with Workspace(store_path, embedder=HashingEmbedder(), reports=tmp_path / "out") as ws:
            client = ScriptedLLM(lens_by_lens(responder(same=True)))
            return await ws.run(PASSAGE, settings=cfg, session="s1", client=client, events=verdicts)

    result = asyncio.run(main())
    monkeypatch.setattr(run_cli.out, "width", 400)
    with open_store(str(store_path)) as store, run_cli.out.capture() as captured:
        run_cli.summarize(
            result, store, cfg, run_cli.projection(cfg, PASSAGE), time.monotonic(), judged=verdicts
        )
    printed = captured.get()
    row = next(line for line in printed.splitlines() if "judged decisions" in line)
    assert "1 judged:" in row
    assert "same question?" in printed and "duplicate, merged (llm, cosine" in printed
    assert "scripted judge: duplicate" in printed
