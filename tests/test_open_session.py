"""One way to open a session: `Workspace.open_session`. A run, a resume, a revisit, the
ledger, a build's sessions and link steps and an eval's sessions all open theirs there,
on the workspace's store thread, embedder and backends; a caller can run its own steps
in one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dagmca.api import EvalOptions, Workspace
from dagmca.config import SessionConfig
from dagmca.errors import EndpointError, SessionBusy, SessionNotFound, UserError
from dagmca.evaluation import Task
from dagmca.graph import NodeKind
from dagmca.llm.base import EndpointDown
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace import BaseWorkspace, OpenSession, SessionMode
from dagmca.workspace.session import run_and_report
from tests.support.sessions import PASSAGE

SMALL = {"llm": "fake", "max_depth": 0, "rounds": 1}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, SessionMode]]:
    """Every session opened, as (id, mode), by whatever opens it."""
    seen: list[tuple[str, SessionMode]] = []
    original = BaseWorkspace.open_session

    @contextlib.asynccontextmanager
    async def counting(self: BaseWorkspace, settings: SessionConfig, **kw: Any) -> AsyncIterator[OpenSession]:
        seen.append((kw["session_id"], kw.get("mode", SessionMode.NEW)))
        async with original(self, settings, **kw) as session:
            yield session

    monkeypatch.setattr(BaseWorkspace, "open_session", counting)
    return seen


def test_run_resume_revisit_ledger_build_and_eval_all_open_their_sessions_in_one_place(
    tmp_path: Path, opened: list[tuple[str, SessionMode]]
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text(PASSAGE)
    tasks = [Task(id="t1", question="What is 2 + 2?", answer="4")]

    async def main() -> None:
        async with Workspace(tmp_path / "w.db", embedder=HashingEmbedder()) as ws:
            await ws.run(PASSAGE, settings={**SMALL, "max_llm_calls": 3}, session="s")  # cut short
            await ws.resume("s", max_llm_calls=10_000)
            await ws.revisit("s", passage="Oslo tried it too.")
            await ws.ledger("s")
            await ws.build([folder], settings=SMALL)
            await ws.eval(tasks, options=EvalOptions(arms="mca", eval_id="ev"), settings=SMALL)

    asyncio.run(main())
    modes = [mode for _, mode in opened]
    assert opened[:4] == [
        ("s", SessionMode.NEW),
        ("s", SessionMode.RESUME),
        ("s", SessionMode.REVISIT),
        ("s", SessionMode.REVISIT),
    ]
    assert modes.count(SessionMode.NEW) >= 3  # the run, the build's passage, the eval's session
    assert len({sid for sid, _ in opened}) >= 3


def test_a_caller_runs_its_own_steps_in_an_opened_session(tmp_path: Path) -> None:
    fake = ScriptedLLM()

    async def main() -> str:
        async with Workspace(tmp_path / "o.db", embedder=HashingEmbedder()) as ws:
            cfg = SessionConfig(**SMALL)
            async with ws.open_session(cfg, session_id="mine", passage=PASSAGE, client=fake) as session:
                assert session.model == fake.model
                result = await run_and_report(session.state, title="t", model=session.model, out_dir=tmp_path)
            return result.session.status

    assert asyncio.run(main()) == "done"
    assert fake.calls, "the handed-in client answered"


def test_an_endpoint_that_goes_down_is_one_error_naming_the_callers_fix(tmp_path: Path) -> None:
    async def main() -> None:
        async with Workspace(tmp_path / "d.db", embedder=HashingEmbedder()) as ws:
            cfg = SessionConfig(**SMALL)
            opening = ws.open_session(
                cfg, session_id="down", passage=PASSAGE, client=ScriptedLLM(), fix_when_down="try later"
            )
            async with opening:
                raise EndpointDown("the endpoint stopped answering")

    with pytest.raises(EndpointError) as caught:
        asyncio.run(main())
    assert caught.value.fix == "try later"


def test_a_session_opened_and_left_is_kept_with_its_writes(tmp_path: Path) -> None:
    async def main() -> None:
        async with Workspace(tmp_path / "k.db", embedder=HashingEmbedder()) as ws:
            cfg = SessionConfig(**SMALL)
            async with ws.open_session(cfg, session_id="k", passage=PASSAGE, client=ScriptedLLM()) as s:
                await run_and_report(s.state, title="t", model=s.model, out_dir=tmp_path)
            assert [n.id for n in await ws.store.aread(lambda st: st.nodes("k", NodeKind.SESSION))] == ["k"]

    asyncio.run(main())


def test_open_session_takes_the_lease_itself_and_writes_nothing_when_another_holds_it(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with SQLiteStore(db) as st:  # a live process elsewhere writes the session
        st.init_schema()
        assert st.claim("held", "elsewhere:4242:abcdef", 600) == "elsewhere:4242:abcdef"
    fake = ScriptedLLM()

    async def main() -> None:
        async with (
            Workspace(db, embedder=HashingEmbedder()) as ws,
            ws.open_session(SessionConfig(**SMALL), session_id="held", passage=PASSAGE, client=fake),
        ):
            raise AssertionError("opened a session another process writes")

    with pytest.raises(SessionBusy, match="4242@elsewhere"):
        asyncio.run(main())
    assert fake.calls == []
    with SQLiteStore(db) as st:
        assert st.get_node("held") is None


def test_the_lease_is_held_while_the_session_is_open_and_given_up_after(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    seen: list[str] = []

    async def main() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            cfg = SessionConfig(**SMALL)
            async with ws.open_session(cfg, session_id="h", passage=PASSAGE, client=ScriptedLLM()) as s:
                with SQLiteStore(db) as other:  # another process, as it sees the store meanwhile
                    seen.append(other.claim("h", "elsewhere:77:theirs", 600))
                await run_and_report(s.state, title="t", model=s.model, out_dir=tmp_path)

    asyncio.run(main())
    assert seen and seen[0].startswith(f"{socket.gethostname()}:{os.getpid()}:")  # ours, not theirs
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT key FROM claims").fetchall() == []


def test_new_refuses_an_existing_id_as_run_does(tmp_path: Path) -> None:
    """A second NEW opening of one id used to run the session again over the first."""
    again = ScriptedLLM()

    async def main() -> None:
        async with Workspace(tmp_path / "n.db", embedder=HashingEmbedder()) as ws:
            await ws.run(PASSAGE, settings=SMALL, session="s")
            with pytest.raises(UserError, match="'s' already exists") as caught:
                async with ws.open_session(
                    SessionConfig(**SMALL), session_id="s", passage=PASSAGE, client=again
                ):
                    raise AssertionError("opened an existing id as new")
            assert caught.value.fix == "choose another id"

    asyncio.run(main())
    assert again.calls == []


def test_a_mode_opens_only_what_it_can_take_up(tmp_path: Path) -> None:
    db = tmp_path / "m.db"

    async def main() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            cfg = SessionConfig(**SMALL)
            await ws.run(PASSAGE, settings=SMALL, session="done")
            with pytest.raises(UserError, match="done is already done; nothing to resume"):
                async with ws.open_session(cfg, session_id="done", passage=PASSAGE, mode=SessionMode.RESUME):
                    pass
            cut = await ws.store.aread(lambda s: s.get_node("done"))
            assert cut is not None
            props = {**cut.props, "status": "interrupted"}
            ws.store.write([cut.model_copy(update={"id": "cut", "session": "cut", "props": props})])
            with pytest.raises(UserError, match=r"cut is not finished \(interrupted\)") as caught:
                async with ws.open_session(cfg, session_id="cut", passage=PASSAGE, mode=SessionMode.REVISIT):
                    pass
            assert "dagmca resume cut" in caught.value.fix
            with pytest.raises(SessionNotFound):
                async with ws.open_session(cfg, session_id="nope", passage=PASSAGE, mode=SessionMode.RESUME):
                    pass
            spent = {**cut.props, "status": "budget_exhausted"}
            ws.store.write([cut.model_copy(update={"id": "spent", "session": "spent", "props": spent})])
            # a build links such a session, `revisit` refuses it: its DAG may be half made
            with pytest.raises(UserError, match=r"spent is not finished \(budget_exhausted\)"):
                await ws.revisit("spent", passage="Oslo tried it too.", max_llm_calls=10_000)

    asyncio.run(main())
    with sqlite3.connect(db) as conn:  # every refusal gave its lease up
        assert conn.execute("SELECT key FROM claims").fetchall() == []
