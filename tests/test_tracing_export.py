"""The spans leave through the SDK's own OTLP exporter; a collector that is down or does
not answer costs a run a few seconds at its end, one line, and nothing the SDK prints."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from dagmca import tracing
from dagmca.errors import SettingsError
from dagmca.tracing import otlp, setup
from tests.support.sandbox import process_env
from tests.support.sessions import PASSAGE

# the dagmca program, with the moment its command returned (its run's end) written to
# stderr before the program's own exit path (the spans' flush) runs; with `slow`, each
# model call waits a little, and the first says so, for a Ctrl-C to land mid-run
PROGRAM = """
import asyncio, sys, time
from dagmca.cli import app
from dagmca.llm import fake

if sys.argv[1] == "slow":
    complete = fake.ScriptedLLM.complete
    async def slow(self, *args, **kwargs):
        if not self.calls:
            print("FIRST-CALL", file=sys.stderr, flush=True)  # once a client
        await asyncio.sleep(0.05)
        return await complete(self, *args, **kwargs)
    fake.ScriptedLLM.complete = slow

main = app.main
def timed(argv=None):
    code = main(sys.argv[2:])
    print(f"RUN-END {time.time()} {code}", file=sys.stderr, flush=True)
    return code
app.main = timed
app.entry()
"""
SDK_WORDS = ("Transient error", "Failed to export", "Exception while exporting", "opentelemetry", "Traceback")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_without_collector(tmp_path: Path, *, interrupt: bool) -> tuple[float, list[str]]:
    """`dagmca run --otel` with the endpoint on a port nobody listens on: the seconds
    from its run's end to its exit, and its stderr lines."""
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    port = free_port()
    env = process_env({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"})
    args = ["run", str(passage), "--llm", "fake", "--otel", "--quiet", "--store", str(tmp_path / "s.db")]
    proc = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, "slow" if interrupt else "fast", *args],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line.rstrip("\n"))
        if interrupt and line.startswith("FIRST-CALL") and lines.count(line.rstrip("\n")) == 1:
            time.sleep(1.0)  # some spans have ended, others are still to come
            proc.send_signal(signal.SIGINT)
        if line.startswith("RUN-END"):
            break
    _, rest = proc.communicate(timeout=60)
    exited = time.time()
    lines += rest.splitlines()
    (end,) = [line for line in lines if line.startswith("RUN-END")]
    return exited - float(end.split()[1]), lines


@pytest.mark.parametrize("interrupt", [False, True], ids=["run to its end", "ctrl-c"])
@pytest.mark.slow  # a run, then the wait for a collector that is down
def test_otel_with_no_collector_exits_within_5s_of_the_runs_end_and_prints_no_sdk_line(
    tmp_path: Path, interrupt: bool
) -> None:
    waited, lines = run_without_collector(tmp_path, interrupt=interrupt)
    assert waited <= 5.0, (waited, lines)
    code = next(line for line in lines if line.startswith("RUN-END")).split()[2]
    assert code == ("130" if interrupt else "0"), lines
    assert not [line for line in lines if any(word in line for word in SDK_WORDS)], lines
    dropped = [line for line in lines if "dropped" in line]
    assert len(dropped) == 1 and dropped[0].startswith("dagmca: ") and "no OTLP collector" in dropped[0]
    assert lines[-1] == dropped[0]  # the last line
    said = [line for line in lines if not line.startswith(("RUN-END", "FIRST-CALL"))]
    assert all(line.startswith("dagmca: ") for line in said), said


@pytest.fixture
def silent_collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A collector that takes connections and never answers, as the endpoint."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")  # longer than any wait here
    try:
        yield
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.slow
def test_a_collector_that_never_answers_is_let_go_and_the_spans_counted_as_dropped(
    silent_collector: None,
) -> None:
    tracer = setup.tracer()
    for i in range(5):
        tracer.start_span(f"work {i}").end()
    start = time.monotonic()
    line = tracing.flush(timeout_s=0.5)
    assert time.monotonic() - start < 0.5 + setup.GIVE_UP_S + 1.0
    assert line is not None and line.startswith(
        "5 spans were dropped: no OTLP collector took them at http://"
    )
    assert tracing.flush(timeout_s=0.5) is None  # said once; nothing is left


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/protobuf or grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", otlp.GRPC_INSTALL),
    ],
)
def test_a_protocol_the_sdk_does_not_send_here_is_one_settings_line(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    monkeypatch.setenv(variable, value)
    try:
        import opentelemetry.exporter.otlp.proto.grpc.trace_exporter  # type: ignore[import-not-found,unused-ignore]  # noqa: F401

        if value == "grpc":
            pytest.skip("the gRPC exporter is installed")
    except ImportError:
        pass
    with pytest.raises(SettingsError) as raised:
        tracing.require(True)  # before the run opens anything
    assert says in raised.value.line()


def test_the_exporter_is_the_sdks_own_for_http() -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    assert isinstance(otlp.sdk_exporter(), OTLPSpanExporter)
