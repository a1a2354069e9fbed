"""Structured output on any endpoint, against a real HTTP server that speaks
the OpenAI API (tests/support/fault_server.py) and refuses what real endpoints refuse: the
pre-flight negotiates a mode once, records it, and the session works in it; reasoning
models get their parameters; a session whose every flag failed says so, with its exit
code, and is not taken for a down endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import NodeKind
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.fault_server import FaultServer
from tests.support.sessions import PASSAGE

pytestmark = pytest.mark.slow

KEY = "sk-test-structured-1b2c3d"
SHAPE = ["--cpp", "2", "--rounds", "1", "--max-branches", "2", "--max-depth", "1", "--max-revisits", "0"]


def run(tmp_path: Path, server: FaultServer, model: str = "fault-model", *extra: str) -> Any:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    return dagmca(
        "run", str(passage), "--llm", "openai", "--model", model, "--base-url", server.base_url,
        "--session", "so", "--quiet", *SHAPE, *extra, cwd=tmp_path, env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip


def session(tmp_path: Path) -> dict[str, Any]:
    with SQLiteStore(tmp_path / ".dagmca" / "dagmca.db") as st:
        node = st.get_node("so")
        assert node is not None
        counts = {k.value: len(st.nodes("so", k)) for k in (NodeKind.TENSION, NodeKind.DEBATE)}
        return {**node.props, **counts}


@pytest.mark.parametrize(
    ("accepts", "mode"),
    [(frozenset({"json_object"}), "json_object"), (frozenset(), "text")],
    ids=["no-json_schema", "no-response_format"],
)
def test_a_session_completes_on_an_endpoint_without_json_schema(
    tmp_path: Path, accepts: frozenset[str], mode: str
) -> None:
    with FaultServer(accepts=accepts) as server:
        proc = run(tmp_path, server)
        bodies = list(server.bodies.values())
    assert proc.returncode == 0, proc.stderr
    s = session(tmp_path)
    assert s["structured_output"] == mode and f"structured output: {mode}" in " ".join(proc.stdout.split())
    assert s["Tension"] > 0 and s["Debate"] >= 2, "flags were raised and at least one branch ran"
    # after the pre-flight, no request asked for what the endpoint refuses
    formats = {(b.get("response_format") or {}).get("type") for b in bodies}
    assert "json_schema" not in formats and formats <= {None, *accepts}


def test_strict_mode_leaves_out_the_keywords_strict_validators_reject(tmp_path: Path) -> None:
    with FaultServer(strict_keywords=True) as server:
        proc = run(tmp_path, server)
        strict = [
            b for b in server.bodies.values() if (b.get("response_format") or {}).get("type") == "json_schema"
        ]
    assert proc.returncode == 0, proc.stderr
    assert session(tmp_path)["structured_output"] == "json_schema_strict"
    assert strict and all(b["response_format"]["json_schema"]["strict"] for b in strict)
    assert all('"maxLength"' not in json.dumps(b["response_format"]) for b in strict)
    assert session(tmp_path)["Tension"] > 0


@pytest.mark.parametrize("model", ["o3-mini", "fault-model"], ids=["known-by-name", "found-at-pre-flight"])
def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature(tmp_path: Path, model: str) -> None:
    with FaultServer(reasoning=True, models=(model,)) as server:
        proc = run(tmp_path, server, model, "--reasoning-effort", "low")
        bodies = list(server.bodies.values())
    assert proc.returncode == 0, proc.stderr
    assert bodies and all("max_tokens" not in b and "temperature" not in b for b in bodies)
    assert all(b["max_completion_tokens"] > 0 and b["reasoning_effort"] == "low" for b in bodies)
    assert session(tmp_path)["status"] == "done"


def test_a_session_whose_every_flag_failed_says_so_and_exits_4(tmp_path: Path) -> None:
    # every JSON reply is broken, the repair's too: no flag survives; text replies are fine
    with FaultServer(rates={"bad_json": 1.0}) as server:
        proc = run(tmp_path, server)
    assert proc.returncode == 4, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if line.startswith("dagmca: warning:")]
    assert len(warning) == 1 and "every observer call failed" in warning[0]
    assert "Traceback" not in proc.stderr and "down" not in proc.stderr
    s = session(tmp_path)
    assert s["status"] == "degraded" and s["Tension"] == 0
    assert "every observer call failed" in json.dumps(s["problems"])
    assert "degraded" in dagmca("sessions", cwd=tmp_path).stdout
