"""`dagmca revisit`: later, with new context, open stubs are checked again, relevant
ones explored into the same DAG, and the session integrated again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.debate.session import RevisitResult
from dagmca.debate.state import SessionState
from dagmca.llm.fake import ScriptedLLM
from dagmca.models import DebateOrigin, EdgeType, TensionStatus
from dagmca.runner import open_state, revisit_and_report
from dagmca.similarity import HashingEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.conftest import PASSAGE, RunSession, lens_by_lens
from tests.test_cli import dagmca
from tests.test_dag_criteria import responder
from tests.test_pipeline import QUESTIONS


def test_revisit_explores_a_stub_the_new_context_makes_relevant(
    run_fake: RunSession, store: SQLiteStore, tmp_path: Path
) -> None:
    settings = dict(max_branches=2, max_depth=1, rounds=1, strategy="urgent", monitor_every="turn")
    _, first, _ = run_fake(responder, max_revisits=0, **settings)
    stub = next(t for t in first.tensions.values() if t.question == QUESTIONS[4])
    assert stub.status is TensionStatus.STUB
    debates_before = set(first.debates)

    cfg = SessionConfig(llm="fake", max_revisits=1, **settings)
    context = f"{QUESTIONS[4]}? New polls after the first month say yes."

    async def go() -> tuple[RevisitResult, SessionState]:
        async with open_state(
            cfg,
            store,
            client=ScriptedLLM(lens_by_lens(responder)),
            session_id="s1",
            passage=PASSAGE,
            embedder=HashingEmbedder(),
        ) as state:
            return await revisit_and_report(state, context=context, out_dir=tmp_path), state

    result, state = asyncio.run(go())

    assert result.explored == [f"{stub.id}/revisit"] and result.checked >= 1
    branch = state.debates[result.explored[0]]
    assert branch.origin is DebateOrigin.REVISIT and set(state.debates) > debates_before
    edges = {(e.source, e.target, e.type) for e in store.edges("s1")}
    assert (branch.id, "s1/main", EdgeType.BRANCHES_FROM) in edges
    assert (branch.id, stub.id, EdgeType.EXPLORES) in edges
    stored = store.get_node(stub.id)
    assert stored is not None and stored.props["status"] == "explored"
    checks = json.loads(str(stored.props["revisit_checks"]))
    assert checks[-1]["after"] == "s1/final" and checks[-1]["outcome"] == "relevant"
    assert ("s1/final", branch.id, EdgeType.INTEGRATES) in edges  # integrated again
    assert check_store(store, "s1") == []


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
