"""The Python API: `dagmca.run` from a script and from inside a running event loop,
`Workspace` running sessions at once on one store, handed-in clients, and errors that
are exceptions without exit codes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import dagmca
from dagmca import errors
from dagmca.api import Workspace
from dagmca.graph import NodeKind
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace import settings_from
from tests.support.sessions import PASSAGE

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"llm": "fake", "max_depth": 0, "rounds": 1}


@pytest.mark.slow
def test_the_one_liner_prints_a_final_answer_and_stores_the_session(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text(PASSAGE)
    code = (
        "import dagmca; r = dagmca.run(passage=open('p.txt').read(), llm='fake', store='x.db'); "
        "print(r.final.text); print(r.id)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    final_text, session_id = done.stdout.strip().splitlines()[-2:]
    assert final_text.strip()
    store = SQLiteStore(tmp_path / "x.db")
    try:
        assert store.has_session(session_id)
        final = store.get_node(f"{session_id}/final")
        assert final is not None and final.props["text"] == final_text
    finally:
        store.close()
    assert (tmp_path / "sessions" / session_id / "final_state.json").exists()


def test_two_sessions_at_once_in_one_workspace_inside_a_running_loop(tmp_path: Path) -> None:
    async def main() -> None:
        asyncio.get_running_loop()  # the API runs on the caller's loop
        async with Workspace(tmp_path / "w.db", embedder=HashingEmbedder()) as ws:
            first, second = await asyncio.gather(
                ws.run(PASSAGE, settings=SMALL, session="first"),
                ws.run(PASSAGE + " A second text.", settings={**SMALL, "seed": 3}, session="second"),
            )
            assert {first.id, second.id} == {"first", "second"}
            assert first.status == second.status == "done"
            assert first.final is not None and second.final is not None
            assert first.spend.calls > 0 and second.spend.calls > 0
            assert [s.id for s in await ws.sessions()] == ["first", "second"]
            graph = await ws.graph("first")
            kinds = {data["kind"] for _, data in graph.nodes(data=True)}
            assert {"Session", "Debate", "Turn", "Final"} <= kinds
            assert all(
                data["session"] in ("first", "")
                for _, data in graph.nodes(data=True)
                if data["kind"] == "Turn"
            )

    asyncio.run(main())
    store = SQLiteStore(tmp_path / "w.db")
    try:
        assert {s.id for s in store.sessions()} == {"first", "second"}
        assert store.nodes("second", NodeKind.FINAL)
    finally:
        store.close()


def test_run_works_where_an_event_loop_is_already_running(tmp_path: Path) -> None:
    """As in Jupyter: the synchronous call inside a coroutine."""

    async def notebook_cell() -> dagmca.RunResult:
        return dagmca.run(PASSAGE, store=tmp_path / "j.db", embedder=HashingEmbedder(), **SMALL)

    result = asyncio.run(notebook_cell())
    assert result.status == "done" and result.final is not None


def test_a_handed_in_client_serves_every_call(tmp_path: Path) -> None:
    client = ScriptedLLM(model="mine")
    result = dagmca.run(
        PASSAGE, store=tmp_path / "c.db", client=client, embedder=HashingEmbedder(), settings=SMALL
    )
    assert result.status == "done"
    assert client.calls and len(client.calls) == result.spend.calls


def test_resume_needs_a_raised_budget_after_the_budget_ran_out(tmp_path: Path) -> None:
    async def main() -> None:
        async with Workspace(tmp_path / "b.db", embedder=HashingEmbedder()) as ws:
            spent = await ws.run(PASSAGE, settings={**SMALL, "max_llm_calls": 4}, session="b")
            assert spent.status == "budget_exhausted"
            with pytest.raises(errors.UserError, match="budget spent"):
                await ws.resume("b")
            resumed = await ws.resume("b", max_llm_calls=1000)
            assert resumed.status == "done"
            with pytest.raises(errors.UserError, match="already done"):
                await ws.resume("b")
            with pytest.raises(errors.SessionNotFound):
                await ws.resume("nope")

    asyncio.run(main())


@pytest.mark.parametrize(
    ("passage", "settings", "kind", "words"),
    [
        ("   ", SMALL, errors.UserError, "empty"),
        ("a\x00b", SMALL, errors.UserError, "NUL"),
        (PASSAGE, {**SMALL, "rounds": 0}, errors.SettingsError, "setting rounds"),
        (PASSAGE, {**SMALL, "roundz": 2}, errors.SettingsError, "setting roundz"),
    ],
)
def test_bad_input_is_an_exception_without_an_exit_code(
    tmp_path: Path, passage: str, settings: dict[str, object], kind: type[Exception], words: str
) -> None:
    with pytest.raises(kind, match=words) as caught:
        dagmca.run(passage, store=tmp_path / "e.db", embedder=HashingEmbedder(), settings=settings)
    assert isinstance(caught.value, errors.DagmcaError)
    assert not hasattr(caught.value, "exit_code")


def test_settings_take_a_config_or_a_mapping_with_overrides() -> None:
    cfg = settings_from({"llm": "fake", "rounds": 3}, {"rounds": 1})
    assert (cfg.llm, cfg.rounds) == ("fake", 1)
    assert settings_from(cfg, {"cpp": 2}).cpp == 2


def test_the_public_names_are_exported() -> None:
    for name in dagmca.__all__:
        assert getattr(dagmca, name) is not None
    with pytest.raises(AttributeError):
        _ = dagmca.nothing_here  # type: ignore[attr-defined]
    assert (ROOT / "dagmca" / "py.typed").exists()


def test_the_workspace_asks_its_graph(tmp_path: Path) -> None:
    """Retrieval over the sessions the workspace ran, and an answer whose citations are
    all nodes of the context (the scripted model cites what it is offered)."""

    async def main() -> None:
        async with Workspace(tmp_path / "a.db", embedder=HashingEmbedder()) as ws:
            await ws.run(PASSAGE, settings=SMALL, session="asked")
            found = await ws.ask("Is road pricing unfair to low-wage workers?", retrieve_only=True)
            assert found.retrieved and all(h.session == "asked" for h in found.retrieved)
            assert found.model == ""  # no model was asked
            answered = await ws.ask("Is road pricing unfair to low-wage workers?", llm="fake")
            assert answered.model and answered.sessions == ["asked"]
            offered = {h.id for h in answered.retrieved}
            assert {c.id for c in answered.citations} <= offered

    asyncio.run(main())
