"""Traces: a scripted run sends its spans over OTLP/HTTP to a real receiver (a local HTTP
server decoding the protobuf, as a collector does), and the spans are the run's: one
per model call in the GenAI conventions, tokens that add up to the session's, the
session -> phase -> debate -> round -> call tree, branches linked to their parents,
no passage text unless asked for."""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.errors import SettingsError
from dagmca.graph import CallRecord, SessionNode, node_from_record
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import SessionMode, run_and_report
from tests.support.opened import open_state, run_build
from tests.support.sandbox import process_env
from tests.support.sessions import PASSAGE, QUESTIONS, lens_by_lens, run_scripted, scripted

# a session that branches (three branches of the main debate), judges and merges them
BRANCHING = {
    "max_branches": 3,
    "max_depth": 1,
    "max_revisits": 0,
    "rounds": 2,
    "strategy": "urgent",
}
SECRET_SENTENCE = "Congestion is a cost each driver imposes on others"


# -- the receiver ----------------------------------------------------------------------
@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent: str
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    links: list[tuple[str, str, dict[str, Any]]]
    resource: dict[str, Any]


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass
class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: every export request decoded."""

    bodies: list[bytes] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            self.bodies.append(body)
            for rs in request.resource_spans:
                resource = _attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            Span(
                                name=s.name,
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent=s.parent_span_id.hex(),
                                attrs=_attrs(s.attributes),
                                events=[(e.name, _attrs(e.attributes)) for e in s.events],
                                links=[
                                    (ln.trace_id.hex(), ln.span_id.hex(), _attrs(ln.attributes))
                                    for ln in s.links
                                ],
                                resource=resource,
                            )
                        )

    def trace(self, trace_id: str) -> list[Span]:
        return [s for s in self.spans if s.trace_id == trace_id]


@pytest.fixture
def otlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """A receiver, with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it (which alone turns
    tracing on)."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            assert self.path == "/v1/traces"
            receiver.take(body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


def run_traced(store: SQLiteStore, tmp_path: Path, **settings: Any) -> SessionNode:
    """A branching scripted session, its spans sent before this returns."""
    settings = {**BRANCHING, **settings}
    result, _, _ = run_scripted(store, tmp_path / "out", scripted(QUESTIONS[:4]), **settings)
    assert tracing.flush() is None  # every span sent: no line says some were dropped
    return result.session


def stored_session(store: SQLiteStore, session: str = "s1") -> SessionNode:
    node = store.get_node(session)
    assert node is not None
    parsed = node_from_record(node)
    assert isinstance(parsed, SessionNode)
    return parsed


def calls_of(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.attrs.get("gen_ai.operation.name") == "chat"]


def kind(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.attrs.get("dagmca.span") == name]


# -- the tests --------------------------------------------------------------------------------
@pytest.mark.parametrize("limited", [False, True], ids=["no limit", "a length limit"])
def test_one_span_per_call_in_the_genai_conventions_with_the_sessions_tokens(
    otlp: Receiver, store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    if limited:  # a limit no value reaches: the SDK applies it, and cuts nothing
        monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100000")
    run_traced(store, tmp_path)
    session = stored_session(store)
    assert session.trace_id and len(session.trace_id) == 32
    spans = otlp.trace(session.trace_id)
    assert spans and {s.trace_id for s in otlp.spans} == {session.trace_id}
    assert spans[0].resource["service.name"] == "dagmca"

    records: list[CallRecord] = store.calls("s1")
    calls = calls_of(spans)
    assert len(calls) == len(records) > 0
    failed = {r.agent for r in records if r.error}
    for span in calls:
        a = span.attrs
        assert span.name == f"chat {a['gen_ai.request.model']}" == "chat scripted"
        assert a["dagmca.role"] and a["dagmca.agent"] and a["dagmca.phase"] and a["dagmca.debate"]
        assert a["dagmca.cache_hit"] is False and a["dagmca.retries"] == 0
        assert isinstance(a["dagmca.cost_usd"], float)
        assert isinstance(a["gen_ai.usage.input_tokens"], int) and isinstance(
            a["gen_ai.usage.output_tokens"], int
        )
        if "error.type" in a:  # a call that failed (the scripted reply did not fit its schema)
            assert a["dagmca.agent"] in failed
            continue
        assert a["gen_ai.response.model"] == "scripted"
        assert a["gen_ai.response.finish_reasons"] == ["stop"]
        assert a["gen_ai.usage.input_tokens"] > 0
    assert len([c for c in calls if "error.type" in c.attrs]) == len([r for r in records if r.error])
    # the same calls as the records, by agent, debate and phase
    assert sorted(
        (c.attrs["dagmca.agent"], c.attrs["dagmca.debate"], c.attrs["dagmca.phase"]) for c in calls
    ) == (sorted((r.agent, r.debate, r.phase) for r in records))
    inputs = sum(c.attrs["gen_ai.usage.input_tokens"] for c in calls)
    outputs = sum(c.attrs["gen_ai.usage.output_tokens"] for c in calls)
    assert inputs == sum(r.prompt_tokens for r in records)
    assert outputs == sum(r.completion_tokens for r in records)
    assert inputs + outputs == session.tokens

    # no prompt or reply text, and no question in the run events, without --otel-content
    assert not any("gen_ai.input.messages" in c.attrs or "gen_ai.output.messages" in c.attrs for c in calls)
    assert not any(SECRET_SENTENCE.encode() in body for body in otlp.bodies)
    assert not any(q.encode() in body for q in QUESTIONS[:4] for body in otlp.bodies)
    tensions = [attrs for s in spans for name, attrs in s.events if name == "tension"]
    assert tensions and all("question" not in t and "urgency" in t for t in tensions)


def test_the_span_tree_session_phase_debate_round_call(
    otlp: Receiver, store: SQLiteStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = run_traced(store, tmp_path)
    assert "ended span" not in caplog.text  # an event after its round went on a span still open
    spans = otlp.trace(stored_session(store).trace_id or "")
    by_id = {s.span_id: s for s in spans}
    (top,) = kind(spans, "session")
    assert top.parent == "" and top.attrs["dagmca.session"] == session.id
    phases = kind(spans, "phase")
    assert {p.name for p in phases} >= {"phase main debate", "phase branches", "phase final integration"}
    assert all(p.parent == top.span_id for p in phases)

    def ancestors(span: Span) -> Iterator[Span]:
        while span.parent:
            span = by_id[span.parent]
            yield span

    # every call for a debate has a debate span of that debate above it; a round's calls
    # have their round in between
    for call in calls_of(spans):
        debate = call.attrs["dagmca.debate"]
        assert any(a.attrs.get("dagmca.span") == "debate" and a.attrs["dagmca.debate"] == debate
                   for a in ancestors(call)), call  # fmt: skip
        assert top in list(ancestors(call))
    in_rounds = [c for c in calls_of(spans) if by_id[c.parent].attrs.get("dagmca.span") == "round"]
    assert in_rounds and any(c.attrs["dagmca.phase"] == "respond" for c in in_rounds)

    runs = {
        s.attrs["dagmca.debate"]: s for s in kind(spans, "debate") if s.attrs["dagmca.debate.part"] == "run"
    }
    assert set(runs) == set(session_debates(store))
    branches = [s for s in runs.values() if s.attrs["dagmca.debate.origin"] == "branch"]
    assert len(branches) == 3
    for branch in branches:
        parent = runs[branch.attrs["dagmca.debate.parent"]]
        assert [(t, s) for t, s, _ in branch.links] == [(parent.trace_id, parent.span_id)]
        # debates run side by side: a branch's parent span is the phase it started in
        assert by_id[branch.parent].name == "phase branches"
    # each debate's rounds are its children
    for rnd in kind(spans, "round"):
        assert by_id[rnd.parent] is runs[rnd.attrs["dagmca.debate"]]
    # the run's events are span events where they happened
    names = {name for s in spans for name, _ in s.events}
    assert {"phase", "round", "tension", "branches", "debate_done"} <= names
    assert "turn" not in names  # its call's span says it


def session_debates(store: SQLiteStore) -> list[str]:
    from dagmca.graph import NodeKind

    return [n.id for n in store.nodes("s1", NodeKind.DEBATE)]


def test_prompt_and_reply_text_only_with_otel_content(
    otlp: Receiver, store: SQLiteStore, tmp_path: Path
) -> None:
    run_traced(store, tmp_path, otel_content=True)
    spans = otlp.trace(stored_session(store).trace_id or "")
    calls = calls_of(spans)
    assert all("gen_ai.input.messages" in c.attrs for c in calls)
    assert all("gen_ai.output.messages" in c.attrs for c in calls if "error.type" not in c.attrs)
    assert any(SECRET_SENTENCE in c.attrs["gen_ai.input.messages"] for c in calls)
    turn = next(c for c in calls if c.attrs["dagmca.phase"] == "respond")
    assert "says something about respond" in turn.attrs["gen_ai.output.messages"]
    tensions = [attrs for s in spans for name, attrs in s.events if name == "tension"]
    assert {t["question"] for t in tensions} <= set(QUESTIONS) and tensions


@pytest.mark.parametrize("sampler", ["always_off", "always_on"])
def test_a_trace_not_sampled_sends_and_keeps_no_span(
    otlp: Receiver, store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sampler: str
) -> None:
    """The trace's sampling is decided once, for the session's span: a run whose trace
    is not sampled sends nothing."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", sampler)
    run_traced(store, tmp_path)
    calls = calls_of(otlp.spans)
    assert len(calls) == (len(store.calls("s1")) if sampler == "always_on" else 0)
    assert bool(otlp.spans) == (sampler == "always_on")


def test_a_resumed_sessions_cache_hits_are_marked(otlp: Receiver, store: SQLiteStore, tmp_path: Path) -> None:
    """A run stopped by its budget, resumed: the replies the cache replays are call
    spans marked as hits, with no tokens; the new calls' tokens are the resumed run's."""
    responder = lens_by_lens(scripted(QUESTIONS[:4]))
    first = SessionConfig(llm="fake", cache=True, agent_memory="session", max_llm_calls=12, **BRANCHING)

    async def go(cfg: SessionConfig, mode: SessionMode) -> None:
        async with open_state(
            cfg, store, client=ScriptedLLM(responder), session_id="s1", passage=PASSAGE,
            embedder=HashingEmbedder(), mode=mode,
        ) as state:  # fmt: skip
            await run_and_report(state, title="t", model="scripted", out_dir=tmp_path / "out")

    asyncio.run(go(first, SessionMode.NEW))
    assert stored_session(store).status == "budget_exhausted"
    first_run = store.calls("s1")
    replayable = [r for r in first_run if not r.error]
    asyncio.run(go(first.model_copy(update={"max_llm_calls": None}), SessionMode.RESUME))
    tracing.flush()
    session = stored_session(store)
    assert session.status == "done"
    spans = calls_of(otlp.trace(session.trace_id or ""))
    hits = [s for s in spans if s.attrs["dagmca.cache_hit"] is True]
    resumed = store.calls("s1")[len(first_run) :]
    # the calls the cache answered, as the records have them: replies of the first run
    replayed = [r for r in resumed if r.cache_hit]
    assert len(hits) == len(replayed) > 0
    assert {r.key for r in replayed} <= {r.key for r in replayable}
    assert all(
        s.attrs["gen_ai.usage.input_tokens"] == s.attrs["gen_ai.usage.output_tokens"] == 0 for s in hits
    )
    assert all(s.attrs["dagmca.cost_usd"] == 0.0 for s in hits)
    fresh = [r for r in resumed if not r.cache_hit]
    assert len(spans) == len(resumed) and len(spans) - len(hits) == len(fresh)
    assert sum(s.attrs["gen_ai.usage.input_tokens"] for s in spans) == sum(r.prompt_tokens for r in fresh)
    # two runs, two traces; the Session node has the latest
    assert len({s.trace_id for s in otlp.spans}) == 2
    (top,) = kind(otlp.trace(session.trace_id or ""), "session")
    assert top.attrs["dagmca.run"] == "resume"


def test_a_build_is_the_parent_of_its_sessions(otlp: Receiver, tmp_path: Path) -> None:
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import Passage

    cfg = SessionConfig(llm="fake", rounds=1, max_depth=1, max_branches=1, max_revisits=0)
    with SQLiteStore(tmp_path / "b.db") as store:
        store.init_schema()
        passages = [
            Passage("p0", "p0.txt", PASSAGE, "One"),
            Passage("p1", "p1.txt", "Another text here.", "Two"),
        ]
        job = Build(cfg, store, passages, reports=lambda s: tmp_path / s)
        run_build(job, job.plan(), store, ScriptedLLM())
        tracing.flush()
        ids = {stored_session(store, p).trace_id for p in ("p0", "p1")}
    (trace_id,) = ids
    spans = otlp.trace(trace_id or "")
    (build,) = kind(spans, "build")
    sessions = kind(spans, "session")
    assert {s.attrs["dagmca.session"] for s in sessions if s.parent == build.span_id} >= {"p0", "p1"}


def test_otel_without_the_extra_is_one_line_naming_the_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dagmca.cli.app import main

    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if never installed
    assert not tracing.installed()
    with pytest.raises(SettingsError) as raised:
        tracing.require(True)
    assert "pip install 'dagmca[otel]'" in raised.value.line()
    tracing.require(False)  # not asked for: nothing to say

    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(passage), "--llm", "fake", "--otel"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert (
        len(lines) == 1 and lines[0].startswith("dagmca: error:") and "pip install 'dagmca[otel]'" in lines[0]
    )


@pytest.mark.slow
def test_an_untraced_run_never_imports_opentelemetry(tmp_path: Path) -> None:
    """Off, tracing costs nothing: not even the import."""
    script = (
        "import sys, dagmca\n"
        "from dagmca.similarity import HashingEmbedder\n"
        f"dagmca.run({PASSAGE!r}, store={str(tmp_path / 's.db')!r}, llm='fake', rounds=1,"
        f" embedder=HashingEmbedder(), reports={str(tmp_path)!r})\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=process_env(), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_an_eval_is_the_parent_of_its_sessions(otlp: Receiver, tmp_path: Path) -> None:
    from dagmca.api import Workspace
    from dagmca.evaluation import Task, parse_arms
    from dagmca.evaluation.running import EvalPlan, run_eval

    base = SessionConfig(llm="fake", otel=True)
    found = [Task.model_validate({"id": f"t{i}", "question": f"What is {i} + {i}?"}) for i in range(2)]
    plan = EvalPlan(eval_id="ev", tasks=found, arms=parse_arms("single", base.model_dump()))

    async def main() -> None:
        async with Workspace(tmp_path / "e.db", embedder=HashingEmbedder()) as ws:
            await run_eval(ws, plan, base, client=ScriptedLLM())

    asyncio.run(main())
    tracing.flush()
    (top,) = kind(otlp.spans, "eval")
    sessions = kind(otlp.spans, "session")
    assert len(sessions) == 2 and all(
        s.parent == top.span_id and s.trace_id == top.trace_id for s in sessions
    )


@pytest.mark.parametrize(("limit", "kept"), [(None, 300), ("5", 5)], ids=["unset", "set"])
def test_a_span_keeps_every_run_event_unless_the_standard_limit_is_set(
    otlp: Receiver, monkeypatch: pytest.MonkeyPatch, limit: str | None, kept: int
) -> None:
    """A phase's span carries every run event of its phase (a revisit checks hundreds of
    stubs): past the SDK's default of 128 the oldest would be dropped unseen."""
    if limit is None:
        monkeypatch.delenv("OTEL_SPAN_EVENT_COUNT_LIMIT", raising=False)
    else:
        monkeypatch.setenv("OTEL_SPAN_EVENT_COUNT_LIMIT", limit)
    tracer = tracing.setup.tracer()
    span = tracer.start_span("phase revisits")
    for i in range(300):
        span.add_event("revisit_check", {"n": i})
    span.end()
    tracing.flush()
    (got,) = [s for s in otlp.spans if s.name == "phase revisits"]
    assert [e[1]["n"] for e in got.events] == list(range(300 - kept, 300))
