"""Evidence before the decision: every schema sent to a model other than the bundled one
lists its reasons, rationales, excerpts and quoted sentences before any verdict,
urgency, category or action; the bundled model's schemas go as declared."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.llm.factory import open_backend
from dagmca.llm.field_order import evidence_first, ordered_schema, violations
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.openai_call import make_client
from dagmca.llm.retry import RetryPolicy
from dagmca.llm.structured import StructuredMode, response_format, with_schema_in_prompt
from dagmca.prompts.schemas import (
    PairVerdict,
    StubVerdict,
    TensionFlag,
    ballot_schema,
    decision_schema,
    joint_flag_schema,
)
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.fault_server import FaultServer, schema_in_prompt
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE


def names(schema: dict[str, Any]) -> list[str]:
    return list(schema["properties"])


def test_evidence_goes_before_the_decision_at_every_level() -> None:
    flag = ordered_schema(TensionFlag, False)
    assert names(flag) == ["question", "excerpt", "rationale", "category", "urgency"]
    assert flag["required"] == names(flag)
    assert names(ordered_schema(PairVerdict, False)) == ["shared_claim", "reason", "verdict"]
    assert names(ordered_schema(StubVerdict, False)) == ["answering_sentence", "reason", "verdict"]
    joint = ordered_schema(joint_flag_schema(("skeptical", "meta"), 2), False)
    item = next(iter(joint["$defs"].values()))
    # what names the flag's lens and turn stays first: it is neither evidence nor decision
    assert names(item) == ["lens", "turn", "question", "excerpt", "rationale", "category", "urgency"]
    vote = ordered_schema(decision_schema(["a1", "a2"], may_answer=True), False)
    for option in vote["$defs"].values():
        assert names(option).index("reason") < names(option).index("action")
    assert names(ordered_schema(ballot_schema(["a1"]), False)) == ["reason", "vote_for"]
    for schema in (TensionFlag, PairVerdict, StubVerdict, joint_flag_schema(("meta",), 0)):
        assert violations(ordered_schema(schema, False)) == []


def test_the_bundled_model_keeps_the_declared_decisive_first_order() -> None:
    declared = ordered_schema(TensionFlag, True)
    assert names(declared) == list(TensionFlag.model_fields)
    assert ("category", "excerpt") in violations(declared)
    # evidence_first never changes what it is given
    before = json.dumps(declared)
    evidence_first(declared)
    assert json.dumps(declared) == before


@pytest.mark.parametrize("mode", list(StructuredMode))
def test_every_mode_sends_the_schema_evidence_first(mode: StructuredMode) -> None:
    fmt = response_format(TensionFlag, mode)
    if fmt is not None and fmt["type"] == "json_schema":
        assert violations(fmt["json_schema"]["schema"]) == []
    prompt = with_schema_in_prompt([{"role": "user", "content": "Check it."}], TensionFlag)
    stated = schema_in_prompt({"messages": prompt})
    assert stated is not None and violations(stated) == []
    assert names(stated) == ["question", "excerpt", "rationale", "category", "urgency"]


def test_the_concession_is_switched_on_for_the_bundled_model_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The factory's local backend without --local-model is the bundled model: decision
    first. A user's GGUF and an endpoint get the evidence first."""
    started: list[Any] = []

    class Server:
        def __init__(self, **kw: Any) -> None:
            self.name, self.context, self.base_url = kw["name"], kw["context"], "http://127.0.0.1:9/v1"

        def start(self) -> Server:
            started.append(self)
            return self

        def stop(self) -> None:
            pass

    monkeypatch.setattr("dagmca.llm.factory.LocalModelServer", Server)
    monkeypatch.setattr(
        "dagmca.llm.factory.read_gguf", lambda path: type("G", (), {"context_length": 4096})()
    )
    monkeypatch.setattr("dagmca.llm.factory.model_file", lambda setting: Path(setting or "bundled.gguf"))
    bundled = open_backend(SessionConfig(llm="local"))
    assert bundled.client.decision_first is True
    mine = open_backend(SessionConfig(llm="local", local_model="/models/qwen2.5-7b.gguf"))
    assert mine.client.decision_first is False
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    endpoint = open_backend(SessionConfig(llm="openai", model="gpt-4o-mini"))
    assert endpoint.client.decision_first is False


@pytest.mark.parametrize("accepts", [frozenset({"json_schema", "json_object"}), frozenset({"json_object"})])
@pytest.mark.slow
def test_a_full_session_on_an_endpoint_sends_every_schema_evidence_first(
    tmp_path: Path, accepts: frozenset[str]
) -> None:
    """Must show: a whole session (debate, observers, judge, ledger, final) against a
    real HTTP server; every schema it sends, in response_format or in the prompt, has
    each evidence property before any decision property."""
    sent: list[dict[str, Any]] = []

    def capture(body: dict[str, Any]) -> None:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            sent.append(fmt["json_schema"]["schema"])
        stated = schema_in_prompt(body)
        if stated is not None:
            sent.append(stated)

    server = FaultServer(on_request=capture, accepts=accepts).start()
    store = SQLiteStore(tmp_path / "r.db")
    store.init_schema()
    cfg = SessionConfig(
        llm="openai", model="fault-model", cpp=2, depth=2, rounds=2, max_branches=2, max_depth=1,
        max_revisits=0, concurrency=4, ledger="all",
    )  # fmt: skip
    backend = OpenAIBackend(
        make_client(server.base_url, "sk-test", 5.0), cfg.model, policy=RetryPolicy(attempts=3)
    )

    async def go() -> None:
        async with open_state(
            cfg, store, client=backend, session_id="s", passage=PASSAGE, embedder=HashingEmbedder()
        ) as state:
            await run_and_report(state, title="t", model=cfg.model, out_dir=tmp_path / "out")

    try:
        asyncio.run(go())
    finally:
        server.stop()
    flags = [s for s in sent if "excerpt" in json.dumps(s)]
    assert len(sent) >= 10 and flags, "the session sent its observers' schemas"
    bad = [(v, s.get("title")) for s in sent for v in violations(s)]
    assert bad == []


def test_a_reflections_note_comes_before_its_satisfaction_and_signal() -> None:
    from dagmca.prompts.schemas import Reflection

    order = list(ordered_schema(Reflection, False)["properties"])
    assert order.index("note") < min(order.index("satisfaction"), order.index("signal"))


def test_a_users_own_local_model_gets_room_for_evidence_first() -> None:
    assert SessionConfig(llm="local").flag_tokens() == 120
    assert SessionConfig(llm="local", local_model="/m/qwen2.5-7b.gguf").flag_tokens() == 300
