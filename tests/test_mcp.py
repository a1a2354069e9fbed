"""`dagmca mcp`: the MCP server in a subprocess, through the SDK's own client (stdio, and
streamable HTTP on 127.0.0.1), on a store the scripted fake filled."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from dagmca.errors import UserError
from dagmca.mcp.readonly import refuse_writes
from dagmca.mcp.tools import RUN_CALL_CAP
from dagmca.store.sqlite import SQLiteStore
from tests.support.ask_sessions import run_prices
from tests.support.fault_server import FaultServer
from tests.support.mcp_client import call, over_stdio, refused, server_args
from tests.support.sandbox import process_env

TOOLS = {"list_sessions", "show_session", "ask", "search", "query", "get_node", "open_questions", "run"}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding s2: two branches that contradict each other and an open stub."""
    root = tmp_path_factory.mktemp("mcp")
    path = root / "graph.db"
    with SQLiteStore(path) as store:
        store.init_schema()
        run_prices(store, root / "out")
    return path


@pytest.fixture
def graph(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(pristine, tmp_path / "graph.db"))


def stored_counts(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    finally:
        conn.close()
    return int(nodes), int(edges)


@pytest.mark.slow
def test_the_tools_read_the_graph_and_ask_cites_nodes_that_exist(graph: Path) -> None:
    async def work(session: ClientSession) -> None:
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        sessions = await call(session, "list_sessions")
        assert [s["id"] for s in sessions] == ["s2"]
        shown = await call(session, "show_session", session="s2")
        assert shown["nodes"]["Debate"] >= 3 and shown["open_questions"] >= 1
        answer = await call(session, "ask", question="Does the toll raise prices at shops?")
        assert {"answer", "citations", "dissent", "retrieved"} <= set(answer)
        assert answer["citations"] and answer["dissent"]["contradictions"]
        retrieved = {h["id"] for h in answer["retrieved"]}
        for citation in answer["citations"]:
            assert citation["id"] in retrieved
            node = await call(session, "get_node", node_id=citation["id"])
            assert node["id"] == citation["id"] and node["session"] == "s2"
        found = await call(session, "search", question="Ordinance QX-4471")
        assert found["status"] == "retrieved" and found["answer"] == ""
        assert any("QX-4471" in h["text"] for h in found["retrieved"] if h["rank"])
        stubs = await call(session, "open_questions")
        assert stubs and all(s["session"] == "s2" and s["question"] for s in stubs)
        assert "no session 'nope'" in await refused(session, "show_session", session="nope")
        assert "no node" in await refused(session, "get_node", node_id="s2/nothing")

    # an endpoint that answers with an instance of the reply's schema: its citations are
    # ids of the answer's context (the scripted fake's are words)
    with FaultServer() as endpoint:
        llm = ["--llm", "openai", "--model", "fault-model", "--base-url", endpoint.base_url]
        over_stdio(graph, work, *llm, env={"OPENAI_API_KEY": "sk-test"})


WRITES = [
    ("CREATE (n:Debate {id: 'x'}) RETURN n", "writes (CREATE)"),
    ("MATCH (d:Debate) SET d.question = 'changed'", "writes (SET)"),
    ("MATCH (n) DETACH DELETE n", "writes (DETACH)"),
    ("MERGE (s:Session {id: 'new'})", "writes (MERGE)"),
    ("CALL apoc.periodic.commit('MATCH (n) RETURN n')", "calls apoc.periodic.commit"),
]


@pytest.mark.slow
def test_query_reads_and_refuses_every_write_with_nothing_written(graph: Path) -> None:
    before = stored_counts(graph)

    async def work(session: ClientSession) -> None:
        counted = await call(session, "query", cypher="MATCH (n) RETURN count(n) AS c")
        nodes = counted["rows"][0]["c"]
        debates = await call(
            session,
            "query",
            cypher="MATCH (d:Debate {session: $s}) RETURN count(d) AS c",
            params={"s": "s2"},
        )
        assert debates["columns"] == ["c"] and debates["rows"][0]["c"] >= 3
        for cypher, why in WRITES:
            line = await refused(session, "query", cypher=cypher)
            assert why in line and "only reads" in line, line
        again = await call(session, "query", cypher="MATCH (n) RETURN count(n) AS c")
        assert again["rows"][0]["c"] == nodes

    over_stdio(graph, work)
    assert stored_counts(graph) == before


@pytest.mark.slow
def test_run_is_refused_without_allow_run(graph: Path) -> None:
    async def work(session: ClientSession) -> None:
        line = await refused(session, "run", passage="Cities should price road space.")
        assert "--allow-run" in line
        assert [s["id"] for s in await call(session, "list_sessions")] == ["s2"]

    over_stdio(graph, work)


@pytest.mark.slow
def test_run_with_allow_run_starts_a_capped_session(graph: Path) -> None:
    async def work(session: ClientSession) -> None:
        done = await call(session, "run", passage="Cities should price road space.", title="tolls")
        assert done["status"] == "done" and done["final"] and done["title"] == "tolls"
        assert done["budget"]["max_llm_calls"] == RUN_CALL_CAP  # no budget set: the cap
        assert done["spend"]["calls"] <= RUN_CALL_CAP
        listed = {s["id"] for s in await call(session, "list_sessions")}
        assert listed == {"s2", done["id"]}

    over_stdio(graph, work, "--allow-run", "--max-depth", "0", "--rounds", "1")


@pytest.mark.slow
def test_streamable_http_on_localhost(graph: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, *server_args(graph, "--http", "--port", "0")],
        cwd=graph.parent,
        env=process_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        assert found, line

        async def go() -> None:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(streamable_http_client(found.group(0)))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                rows = await call(session, "query", cypher="MATCH (s:Session) RETURN s.id AS id")
                assert rows["rows"] == [{"id": "s2"}]
                assert "writes (CREATE)" in await refused(session, "query", cypher="CREATE (n)")
                resources = await session.read_resource("dagmca://session/s2")
                shown = json.loads(str(getattr(resources.contents[0], "text", "")))
                assert shown["id"] == "s2"

        asyncio.run(asyncio.wait_for(go(), 240))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (n) RETURN n.text AS t // CREATE nothing here",
        "MATCH (n) WHERE n.text CONTAINS 'SET it apart' RETURN n",
        "CALL db.index.fulltext.queryNodes('dagmca_text', $q) YIELD node RETURN node.id",
    ],
)
def test_reads_pass_the_read_only_check(cypher: str) -> None:
    refuse_writes(cypher)


@pytest.mark.parametrize(
    "cypher",
    ["LOAD CSV FROM 'file:///x' AS r RETURN r", "DROP INDEX dagmca_text", "CALL db.createLabel('X')"],
)
def test_writes_fail_the_read_only_check(cypher: str) -> None:
    with pytest.raises(UserError):
        refuse_writes(cypher)
