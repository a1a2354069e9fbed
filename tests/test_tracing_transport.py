"""The exporter's plain-HTTP transport, against a real HTTP server on 127.0.0.1: when it is
used, and that the SDK's client on top of it still retries, backs off and times out."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.http.transport._base", reason="no pluggable OTLP transport")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from dagmca.tracing.otlp import Exporter
from dagmca.tracing.transport import HTTPTransport, endpoint, transport_for

CLEAN = (
    "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
    "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CLEAN:
        monkeypatch.delenv(name, raising=False)


def spans(n: int = 3) -> list[ReadableSpan]:
    tracer = TracerProvider().get_tracer("t")
    made = []
    for i in range(n):
        span = tracer.start_span(f"s{i}")
        span.end()
        assert isinstance(span, ReadableSpan)
        made.append(span)
    return made


Answer = tuple[int, dict[str, str], str]  # status, headers, closing: "" (no), "say", "silently"


class Server:
    """A collector whose answer to each request a test scripts (status, headers, and
    whether it closes the connection after it: saying so, or without a word, as a
    collector closing an idle connection does); the connections it accepted."""

    def __init__(self, answers: Callable[[int], Answer]) -> None:
        self.requests: list[tuple[str, int]] = []  # (path, the connection's port)
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                with outer.lock:
                    outer.requests.append((self.path, self.client_address[1]))
                    number = len(outer.requests)
                status, headers, close = answers(number)
                if headers.get("sleep"):
                    time.sleep(float(headers.pop("sleep")))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "0")
                if close == "say":
                    self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = bool(close)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(answers: Callable[[int], Answer] = lambda n: (200, {}, "")) -> Server:
        server = Server(answers)
        started.append(server)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.url)
        return server

    yield start
    for server in started:
        server.close()


def test_the_transport_is_used_only_where_nothing_asks_for_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert endpoint() == "http://localhost:4318/v1/traces"  # the SDK's default
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert endpoint() == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://otlp.example/v1/traces")
    assert endpoint() == "https://otlp.example/v1/traces"  # the traces variable first

    assert isinstance(transport_for("http://collector:4318/v1/traces"), HTTPTransport)
    assert transport_for("https://otlp.example/v1/traces") is None  # TLS: requests' certificates
    monkeypatch.setenv("HTTP_PROXY", "http://proxy:3128")
    assert transport_for("http://collector:4318/v1/traces") is None  # a proxy: requests'
    monkeypatch.setenv("NO_PROXY", "collector")
    assert isinstance(transport_for("http://collector:4318/v1/traces"), HTTPTransport)  # exempt
    monkeypatch.setenv("OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER", "vault")
    assert transport_for("http://collector:4318/v1/traces") is None  # a requests session


def test_the_exporter_sends_over_it_on_one_kept_alive_connection(serve: Callable[..., Server]) -> None:
    server = serve()
    exporter = Exporter()
    assert isinstance(exporter._client._transport, HTTPTransport)
    for _ in range(3):
        assert exporter.export(spans()) is SpanExportResult.SUCCESS
    assert [path for path, _ in server.requests] == ["/v1/traces"] * 3
    assert len({port for _, port in server.requests}) == 1  # one connection for all three
    exporter.shutdown()


@pytest.mark.parametrize("closing", ["say", "silently"])
def test_a_connection_the_collector_closed_is_opened_again(
    serve: Callable[..., Server], closing: str
) -> None:
    # silently: the next request finds the connection dead, and the SDK's client asks
    # again at once, on a new one
    server = serve(lambda n: (200, {}, closing))
    exporter = Exporter()
    for _ in range(3):
        assert exporter.export(spans()) is SpanExportResult.SUCCESS
    assert len(server.requests) == 3 and len({port for _, port in server.requests}) == 3


def test_a_busy_collector_is_asked_again_after_its_retry_after(serve: Callable[..., Server]) -> None:
    # a 503 is retryable; its Retry-After (read case-insensitively) replaces the backoff
    server = serve(lambda n: (503, {"retry-AFTER": "0"}, "") if n == 1 else (200, {}, ""))
    exporter = Exporter()
    started = time.monotonic()
    assert exporter.export(spans()) is SpanExportResult.SUCCESS
    assert len(server.requests) == 2
    assert time.monotonic() - started < 0.7  # not the SDK's backoff: a second, jittered by a fifth


def test_a_refused_or_slow_collector_fails_the_export_without_raising(
    serve: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0.5")
    started = time.monotonic()
    assert Exporter().export(spans()) is SpanExportResult.FAILURE
    assert time.monotonic() - started < 2.0

    serve(lambda n: (200, {"sleep": "3"}, ""))  # answers after the deadline
    started = time.monotonic()
    assert Exporter().export(spans()) is SpanExportResult.FAILURE
    assert time.monotonic() - started < 2.0


def test_credentials_or_an_unreadable_url_leave_the_sending_to_the_sdk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """What `requests` reads and http.client would not: credentials in the URL or in a
    netrc file for the host. A URL neither can read fails export by export, as before."""
    assert transport_for("http://user:secret@collector:4318/v1/traces") is None
    netrc = tmp_path / "netrc"
    netrc.write_text("machine collector login user password secret\n")
    monkeypatch.setenv("NETRC", str(netrc))
    assert transport_for("http://collector:4318/v1/traces") is None
    assert isinstance(transport_for("http://elsewhere:4318/v1/traces"), HTTPTransport)
    for unreadable in ("http://[::1/v1/traces", "http://collector:port/v1/traces"):
        assert transport_for(unreadable) is None


def test_a_forked_child_lets_go_of_its_parents_connection(serve: Callable[..., Server]) -> None:
    from dagmca.tracing import transport

    serve()
    exporter = Exporter()
    assert exporter.export(spans()) is SpanExportResult.SUCCESS
    sent = exporter._client._transport
    assert isinstance(sent, HTTPTransport) and sent._connection is not None
    transport._forget_in_child()  # what a fork runs in the child
    assert sent._connection is None
    assert exporter.export(spans()) is SpanExportResult.SUCCESS  # on a connection of its own


def test_the_request_size_limit_is_the_sdks(serve: Callable[..., Server]) -> None:
    """A request over the limit is dropped before it is sent; a limit of 0 is none."""
    server = serve()
    exporter = Exporter()
    exporter._max_request_size = 10
    assert exporter.export(spans()) is SpanExportResult.FAILURE and server.requests == []
    exporter._max_request_size = 0
    assert exporter.export(spans()) is SpanExportResult.SUCCESS and len(server.requests) == 1
