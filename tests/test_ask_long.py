"""Asking, serving and deleting a session of a long passage, as a strong model writes it
(answers of paragraphs and lists, long resolutions): `ask --json` cites nodes that exist
and were retrieved, the MCP tools and resources over stdio read that session, and
`delete` removes it, leaving a store whose other session still passes `check`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from dagmca.ask import Answer
from dagmca.graph import NodeKind
from dagmca.store.sqlite import SQLiteStore
from tests.support.ask_sessions import run_prices
from tests.support.cli import dagmca
from tests.support.fault_server import FaultServer
from tests.support.mcp_client import call, over_stdio
from tests.support.sessions import run_scripted
from tests.support.strong_fake import LONG_PASSAGE, StrongModel

pytestmark = pytest.mark.slow

QUESTION = "Does a four-day week keep output per hour, or do firms need more staff?"


def long_store(root: Path) -> Path:
    """A store with `long` (the strong model on the four-day-week passage) and s2."""
    path = root / "graph.db"
    with SQLiteStore(path) as store:
        store.init_schema()
        run_scripted(
            store,
            root / "out",
            StrongModel(),
            session="long",
            passage=LONG_PASSAGE,
            caps=True,
            max_branches=2,
            max_depth=1,
            rounds=2,
            strategy="urgent",
        )
        run_prices(store, root / "out")
        assert store.nodes("long", NodeKind.FINAL) and len(store.nodes("long", NodeKind.DEBATE)) >= 2
    return path


def test_a_long_session_is_asked_served_and_deleted(tmp_path: Path) -> None:
    path = long_store(tmp_path)
    store_arg = ("--store", str(path))
    # an endpoint that answers with an instance of the reply's schema: its citations are
    # ids of the answer's context (the scripted fake cites words, which are removed)
    with FaultServer(fields={"supported": "yes"}) as endpoint:
        llm = ("--llm", "openai", "--model", "fault-model", "--base-url", endpoint.base_url)
        env = {"OPENAI_API_KEY": "sk-test"}
        asked = dagmca(
            "ask", QUESTION, "--session", "long", "--json", *store_arg, *llm, cwd=tmp_path, env=env
        )
    assert asked.returncode == 0, asked.stderr
    answer = Answer.model_validate_json(asked.stdout)
    assert answer.status == "answered" and answer.citations and answer.sessions == ["long"]
    retrieved = {h.id: h for h in answer.retrieved}
    with SQLiteStore(path) as store:
        for citation in answer.citations:
            assert citation.id in retrieved and retrieved[citation.id].in_context
            node = store.get_node(citation.id)
            assert node is not None and node.session == "long"
    # the long texts reach the answer's context whole: a retrieved resolution is the stored one
    assert any(len(h.text.split()) > 150 for h in answer.retrieved if h.in_context)

    async def served(session: ClientSession) -> None:
        found = await call(session, "search", question=QUESTION, session="long")
        hits = [h for h in found["retrieved"] if h["rank"]]
        assert hits and all(h["session"] == "long" for h in found["retrieved"])
        for hit in hits[:3]:
            node = await call(session, "get_node", node_id=hit["id"])
            assert node["id"] == hit["id"] and node["session"] == "long"
        # the session summaries are resources: the list, and one session by its address
        listed = await session.list_resources()
        assert "dagmca://sessions" in {str(r.uri) for r in listed.resources}
        templates = await session.list_resource_templates()
        assert "dagmca://session/{session}" in {t.uri_template for t in templates.resource_templates}
        summaries = await read_json(session, "dagmca://sessions")
        assert {s["id"] for s in summaries} == {"long", "s2"}
        one = await read_json(session, "dagmca://session/long")
        assert one["id"] == "long" and one["final"] and one["nodes"]["Debate"] >= 2

    over_stdio(path, served)

    deleted = dagmca("delete", "long", "--yes", *store_arg, cwd=tmp_path)
    assert deleted.returncode == 0, deleted.stderr
    assert "deleted long:" in deleted.stdout
    with SQLiteStore(path) as store:
        assert store.nodes("long") == [] and store.calls("long") == []
        assert [s.id for s in store.sessions()] == ["s2"]
        assert all(store.get_node(c.id) is None for c in answer.citations)
    checked = dagmca("check", "s2", *store_arg, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def read_json(session: ClientSession, uri: str) -> Any:
    read = await session.read_resource(uri)  # type: ignore[arg-type]
    [content] = read.contents
    return json.loads(str(getattr(content, "text", "")))
