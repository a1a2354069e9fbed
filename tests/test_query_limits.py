"""A query cannot stall whoever runs it: each has a time limit (the embedded engine
checks it as it goes, Neo4j gets it as the transaction's timeout), an assistant's
returns at most so many rows and says when more were left out, and the MCP server
answers its other tools while a query runs. A query that is not Cypher says where it
cannot be read."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from mcp import ClientSession

from dagmca.store.embedded import CypherSyntaxError, Deadline, Graph, QueryTimeout, Unsupported, load, run
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.mcp_client import call, over_stdio, refused
from tests.support.synthetic import synthetic_session

CARTESIAN = "MATCH (a:Node), (b:Node), (c:Node) RETURN count(*) AS n"
NODES = 400  # a three-way product of them is 64 million rows: none of it finishes in seconds


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "graph.db"
    with SQLiteStore(path) as store:
        store.init_schema()
        store.write(*synthetic_session(NODES, NODES))
    return path


def test_the_engine_stops_a_cartesian_product_at_its_limit(big: Path) -> None:
    with SQLiteStore(big) as st:
        graph = load(st)
    began = time.monotonic()
    with pytest.raises(QueryTimeout) as caught:
        run(graph, CARTESIAN, {}, deadline=Deadline(0.5))
    assert time.monotonic() - began < 0.5 + 1.0
    assert "time limit of 0.5 s" in caught.value.line() and "\n" not in caught.value.line()
    # with no limit, a query that finishes is not touched by the check
    assert run(graph, "MATCH (a:Session), (b:Session) RETURN count(*) AS n", {})[1] == [{"n": 1}]


def test_the_limit_stops_nested_comprehensions_and_reduce_too() -> None:
    for text in (
        "RETURN size([x IN range(1, 20000) | size([y IN range(1, 20000) WHERE y > x | y])]) AS n",
        "UNWIND range(1, 20000) AS x RETURN sum(reduce(s = 0, y IN range(1, 20000) | s + y)) AS n",
    ):
        began = time.monotonic()
        with pytest.raises(QueryTimeout):
            run(load_empty(), text, {}, deadline=Deadline(0.3))
        assert time.monotonic() - began < 0.3 + 1.0, text


def test_a_range_too_long_to_build_is_refused_before_it_fills_memory() -> None:
    began = time.monotonic()
    with pytest.raises(Unsupported) as caught:
        run(load_empty(), "UNWIND range(1, 10000000000) AS x RETURN count(x) AS n", {}, deadline=Deadline(5))
    assert time.monotonic() - began < 1 and "range()" in caught.value.line()
    assert run(load_empty(), "RETURN size(range(1, 1000)) AS n", {})[1] == [{"n": 1000}]


def test_max_rows_keeps_one_row_more_than_asked(big: Path) -> None:
    with SQLiteStore(big) as st:
        graph = load(st)
    keys, rows = run(graph, "MATCH (a:Node), (b:Node) RETURN a.id AS a, b.id AS b", {}, max_rows=10)
    assert keys == ["a", "b"] and len(rows) == 11
    skipped = run(graph, "UNWIND range(1, 100) AS x RETURN x SKIP 50", {}, max_rows=10)[1]
    assert [r["x"] for r in skipped] == list(range(51, 62))
    ordered = run(graph, "UNWIND range(1, 100) AS x RETURN x ORDER BY x DESC", {}, max_rows=3)[1]
    assert [r["x"] for r in ordered] == [100, 99, 98, 97]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("MATCH (n) RETRUN n", "at 'RETRUN' (line 1, column 11, offset 10)"),
        ("MATCH (n)\nWHERE n.x = 1\nRETURN n +", "the end of the query (line 3, column 11"),
        ("MATCH (n) RETURN n ORDER n", "at 'n' (line 1, column 26"),
    ],
)
def test_a_query_that_cannot_be_parsed_says_where(text: str, where: str) -> None:
    with pytest.raises(CypherSyntaxError) as caught:
        run(load_empty(), text, {})
    line = caught.value.line()
    assert not isinstance(caught.value, Unsupported)
    assert line.startswith("cannot read the query") and where in line and "not supported" not in line, line


def load_empty() -> Graph:
    return Graph.from_rows([], [])


@pytest.mark.slow
def test_dagmca_query_stops_at_its_timeout_in_one_line(big: Path) -> None:
    began = time.monotonic()
    proc = dagmca("query", CARTESIAN, "--timeout", "1", "--store", str(big), cwd=big.parent)
    assert time.monotonic() - began < 1 + 10  # the interpreter's start and the store's load besides
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "time limit of 1 s" in lines[0] and "Traceback" not in proc.stderr
    misspelt = dagmca("query", "MATCH (n) RETRUN n", "--store", str(big), cwd=big.parent)
    assert misspelt.returncode == 2 and "cannot read the query" in misspelt.stderr
    assert "line 1, column 11" in misspelt.stderr and "not supported" not in misspelt.stderr


@pytest.mark.slow
def test_an_mcp_query_over_its_limit_stops_and_the_other_tools_answer_meanwhile(big: Path) -> None:
    limit = 3.0

    async def work(session: ClientSession) -> None:
        began = time.monotonic()
        query = asyncio.create_task(refused(session, "query", cypher=CARTESIAN))
        await asyncio.sleep(0.5)  # the query is running
        sessions = await call(session, "list_sessions")
        answered = time.monotonic() - began
        assert [s["id"] for s in sessions] == ["synthetic"]
        assert not query.done() and answered < limit, answered  # answered while the query ran
        line = await query
        assert time.monotonic() - began < limit + 2
        assert f"time limit of {limit:g} s" in line and "--query-timeout" in line, line

    over_stdio(big, work, "--query-timeout", str(limit))


@pytest.mark.slow
def test_an_mcp_query_returns_at_most_its_rows_and_says_so(big: Path) -> None:
    async def work(session: ClientSession) -> None:
        many = await call(session, "query", cypher="UNWIND range(1, 1500) AS x RETURN x")
        assert len(many["rows"]) == 1000 and many["truncated"] is True
        assert many["rows"][-1] == {"x": 1000} and "1000 rows" in many["note"]
        few = await call(session, "query", cypher="UNWIND range(1, 1000) AS x RETURN x")
        assert len(few["rows"]) == 1000 and few["truncated"] is False

    over_stdio(big, work)
