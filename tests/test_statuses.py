"""Statuses are str enums (`dagmca.graph.status`): each stored as the string it always
was, so a store written before reads the same; the sets the code asks about are named
once; and no module outside `dagmca/graph` sets or compares a status as a bare string."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from dagmca.api import Workspace
from dagmca.graph import (
    EVALUATION_SESSION,
    AnswerStatus,
    DebateStatus,
    EvaluationNode,
    NodeKind,
    NodeRecord,
    PassageStatus,
    RunStatus,
    SessionNode,
    SessionStatus,
    node_from_record,
)
from dagmca.graph.store_nodes import SWARM_SESSION, SwarmNode
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from tests.support.sessions import PASSAGE

ROOT = Path(__file__).resolve().parents[1]
SESSION_STATUSES = ["running", "done", "degraded", "budget_exhausted", "interrupted", "failed"]


def test_every_status_is_the_string_dagmca_always_stored() -> None:
    assert [s.value for s in SessionStatus] == SESSION_STATUSES
    assert [s.value for s in DebateStatus] == ["running", "done", "failed"]
    assert [s.value for s in RunStatus] == ["running", "done", "budget_exhausted"]
    assert [s.value for s in AnswerStatus] == ["answered", "unsupported", "nothing", "retrieved", "failed"]
    assert [s.value for s in PassageStatus] == [
        "waiting", "running", "linking", "done", "finished earlier", "claimed by another worker", "failed",
        "skipped",
    ]  # fmt: skip


def test_the_sets_asked_of_a_sessions_status_are_named_once() -> None:
    ended = {s.value for s in SessionStatus if s.ended()}
    assert ended == {"done", "degraded", "budget_exhausted"}
    assert {s.value for s in SessionStatus if s.revisitable()} == {"done", "degraded"}
    assert {s.value for s in SessionStatus if s.continuable()} == set(SESSION_STATUSES) - {"done"}
    assert {s.value for s in PassageStatus if s.finished()} == {"done", "finished earlier"}
    assert {s.value for s in PassageStatus if s.pending()} == {"waiting", "running", "linking"}
    assert {s.value for s in PassageStatus if s.unfinished()} == {
        "failed", "skipped", "claimed by another worker"
    }  # fmt: skip


def _session_record(sid: str, status: str | None) -> NodeRecord:
    record = SessionNode(
        id=sid, session=sid, passage="p", passage_sha256="x", title="t", config="{}", model="m"
    )
    props = dict(record.to_record().props)
    props.pop("status")
    if status is not None:
        props["status"] = status
    return record.to_record().model_copy(update={"props": props})


def test_a_store_written_before_reads_its_statuses_back(tmp_path: Path) -> None:
    """Records as an earlier version wrote them (plain strings), through a real store."""
    with SQLiteStore(tmp_path / "old.db") as st:
        st.init_schema()
        st.write([_session_record(f"s-{s}", s) for s in SESSION_STATUSES] + [_session_record("s-none", None)])
        st.write([
            EvaluationNode(id="ev/evaluation", session=EVALUATION_SESSION, eval_id="ev", tasks=1).to_record(),
            SwarmNode(id="sw/swarm", session=SWARM_SESSION, swarm_id="sw", tasks=1).to_record(),
        ])  # fmt: skip
        for status in SESSION_STATUSES:
            record = st.get_node(f"s-{status}")
            assert record is not None and record.props["status"] == status
            node = node_from_record(record)
            assert isinstance(node, SessionNode) and node.status is SessionStatus(status)
            assert SessionStatus.of(record) is SessionStatus(status)
            # written back, the same string
            assert (
                node.to_record().props["status"] == status and type(node.to_record().props["status"]) is str
            )
        missing = st.get_node("s-none")
        assert missing is not None and SessionStatus.of(missing) is SessionStatus.RUNNING
        unknown = _session_record("s-later", "paused")  # a status a later version might write
        assert SessionStatus.of(unknown) is SessionStatus.RUNNING and not SessionStatus.of(unknown).ended()
        for sid in ("ev/evaluation", "sw/swarm"):
            record = st.get_node(sid)
            assert record is not None and record.props["status"] == "running"
            assert node_from_record(record).model_dump()["status"] is RunStatus.RUNNING


def test_a_run_stores_its_status_as_a_plain_string(tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    async def main() -> None:
        async with Workspace(db, embedder=HashingEmbedder()) as ws:
            result = await ws.run(PASSAGE, settings={"llm": "fake", "max_depth": 0, "rounds": 1}, session="s")
            assert result.status is SessionStatus.DONE

    asyncio.run(main())
    with SQLiteStore(db) as st:
        record = st.get_node("s")
        assert record is not None and record.kind is NodeKind.SESSION
        assert type(record.props["status"]) is str and record.props["status"] == "done"
        debates = [d.props["status"] for d in st.nodes("s", NodeKind.DEBATE)]
        assert debates and all(type(d) is str and d == "done" for d in debates)


LITERAL = re.compile(r"""["'](done|degraded|budget_exhausted|interrupted|failed|running)["']""")
COMPARED = re.compile(
    r"""(==|!=|\bin\b|\bis\b)\s*\(?["'](done|degraded|budget_exhausted|interrupted|failed|running)["']"""
    r"""|["'](done|degraded|budget_exhausted|interrupted|failed|running)["']\s*(==|!=|\bin\b)"""
)
# quoted words that are no status: a stop word, the executor's message keys and reason
NOT_STATUSES = {
    ("dagmca/ask/retrieval.py", "done"),
    ("dagmca/executor/inside.py", "failed"),
    ("dagmca/executor/supervisor.py", "failed"),
}


def test_no_module_outside_the_graph_sets_or_compares_a_status_as_a_bare_string() -> None:
    found = []
    for path in sorted((ROOT / "dagmca").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if where.startswith("dagmca/graph/"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words = LITERAL.findall(line)
            if not words or all((where, w) in NOT_STATUSES for w in words):
                continue
            about_status = re.search(r"\b(status|state)\b", line) or len(words) > 1 or COMPARED.search(line)
            if about_status:
                found.append(f"{where}:{n}: {line.strip()}")
    assert found == []
