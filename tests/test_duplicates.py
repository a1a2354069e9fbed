"""Duplicate tensions across the session: candidates by cosine, the judge decides,
the later stub leaves the open stubs with its reason and an edge to its twin."""

from __future__ import annotations

import asyncio
from typing import Any

from dagmca.config import SessionConfig
from dagmca.debate.dag import duplicates
from dagmca.debate.events import DuplicateChecked
from dagmca.graph import (
    DebateNode,
    DebateOrigin,
    EdgeType,
    TensionCategory,
    TensionNode,
    TensionStatus,
)
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.prompts.schemas import DuplicateVerdict
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_provenance
from dagmca.store.sqlite import SQLiteStore
from tests.support.duplicates import STUBS, TREES, run_merge
from tests.support.judges import judge_reply
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE


def test_a_later_stub_the_judge_finds_the_same_leaves_the_open_stubs(store: SQLiteStore) -> None:
    state, (trees, again, benches, third, heat), fake, recorder, merged = run_merge(store)

    # each new stub judged against the one earlier stub most like it, past the prefilter
    judged = [c for c in fake.calls if c.schema is DuplicateVerdict]
    checks = [e for e in recorder.events if isinstance(e, DuplicateChecked)]
    assert len(judged) == len(checks) >= 3
    assert {e.stub for e in checks} >= {again.id, benches.id, third.id}
    assert heat.id not in {e.stub for e in checks}, "nothing like it before: not judged"

    assert merged == [again.id, third.id]
    assert again.status is TensionStatus.DUPLICATE and again.duplicate_of == trees.id
    # the third's most similar earlier stub may be the second: merged into what it stands for
    assert third.status is TensionStatus.DUPLICATE and third.duplicate_of == trees.id
    assert "scripted judge: duplicate" in again.dropped_reason
    assert benches.status is TensionStatus.STUB and heat.status is TensionStatus.STUB
    kept = next(e for e in checks if e.stub == benches.id)
    assert not kept.merged and kept.reason == "scripted judge: distinct" and kept.method == "llm"

    # the twin carries every flag that raised either; the graph says why
    assert set(trees.flags) == {f for t in (trees, again, third) for f in t.flags}
    edges = {(e.source, e.type, e.target): e.props for e in store.edges("s")}
    dup = edges[(again.id, EdgeType.DUPLICATES, trees.id)]
    assert dup["method"] == "llm" and dup["verdict"] == "duplicate" and dup["reason"]
    assert (third.id, EdgeType.DUPLICATES, trees.id) in edges
    assert (trees.id, EdgeType.FLAGGED_AT, "s/main/b1/r1/t1") in edges
    stored = store.get_node(again.id)
    assert stored is not None and stored.props["status"] == "duplicate" and "Stub" not in stored.labels
    assert {t.id for t in state.graph.open_stubs()} == {trees.id, benches.id, heat.id}
    assert check_provenance(store.nodes("s"), store.edges("s")) == []
    # `check` finds a duplicate whose edge is missing
    edges_but_one = [e for e in store.edges("s") if e.type is not EdgeType.DUPLICATES or e.source != again.id]
    assert check_provenance(store.nodes("s"), edges_but_one) == [
        f"duplicate {again.id}: no DUPLICATES edge {again.id} -> {trees.id} (key '')"
    ]


def test_without_the_judge_only_near_restatements_merge(store: SQLiteStore) -> None:
    # the second branch restates the first one's question word for word
    restating = [*STUBS, ("main/b2", STUBS[1][1])]
    _, tensions, fake, recorder, merged = run_merge(store, restating, judge="embedding")
    assert not fake.calls, "similarity alone asks no model"
    restated = tensions[-1]
    assert merged == [restated.id], "paraphrases stay apart under the 0.95 threshold"
    assert restated.duplicate_of == tensions[1].id
    (check,) = [e for e in recorder.events if isinstance(e, DuplicateChecked)]
    assert check.merged and check.method == "embedding" and "similarity alone" in check.reason
    assert all(t.status is TensionStatus.STUB for t in tensions[:-1])


def test_a_prefilter_of_one_turns_it_off(store: SQLiteStore) -> None:
    _, tensions, fake, recorder, merged = run_merge(store, duplicate_prefilter=1.0)
    assert merged == [] and not fake.calls and not recorder.events
    assert all(t.status is TensionStatus.STUB for t in tensions)


def test_a_failed_judge_merges_nothing(store: SQLiteStore) -> None:
    cfg = SessionConfig(llm="fake")

    def refuse(call: ScriptedCall) -> Any:
        return None if call.schema is DuplicateVerdict else judge_reply(call)

    async def go() -> list[TensionNode]:
        async with open_state(
            cfg,
            store,
            client=ScriptedLLM(refuse),
            session_id="s",
            passage=PASSAGE,
            embedder=HashingEmbedder(),
        ) as state:
            main = DebateNode(id="s/main", session="s", origin=DebateOrigin.MAIN, question="Q", depth=0)
            state.write([main])
            twins = [
                TensionNode(id=f"s/main/t{i}", session="s", debate=main.id, question=TREES, urgency=0.5,
                            rationale="r", excerpt="e", observer="meta", category=TensionCategory.GAP)
                for i in range(2)
            ]  # fmt: skip
            state.write(twins)
            assert await duplicates.merge(state, [main]) == []
            return twins

    assert all(t.status is TensionStatus.STUB for t in asyncio.run(go()))
