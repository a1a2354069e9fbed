"""The OTLP span exporter, as the SDK ships it: HTTP (protobuf) by default, gRPC when
the standard protocol variable asks for it and its package is installed. Endpoint,
headers, timeout, compression, TLS and retries are the SDK's own reading of the
OTEL_* variables. Imported only when a run is traced.

dagmca's exporter is the SDK's, wrapped only to count what it sent, so that a run can
end by saying how many spans no collector took, and to let go of a collector that does
not answer: a process must not wait on it to exit."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from dagmca.errors import SettingsError

PROTOCOL_VARS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
GRPC_INSTALL = "pip install opentelemetry-exporter-otlp-proto-grpc"
GRPC_MODULE = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"
# the SDK's loggers: a collector that is down would print a few lines a batch, on a
# run's terminal, however quiet the run is asked to be; dagmca says it once, at the end
QUIET_LOGGERS = ("opentelemetry.exporter", "opentelemetry.sdk")
_DEFAULT_HTTP = "http://localhost:4318"
_DEFAULT_GRPC = "http://localhost:4317"


def protocol() -> str:
    """The OTLP protocol the standard variables ask for (the SDK's default: HTTP)."""
    for name in PROTOCOL_VARS:
        value = os.environ.get(name, "").strip().lower()
        if value:
            return value
    return "http/protobuf"


def endpoint() -> str:
    """Where the spans go, as the exporter resolves it from the environment (for the
    line that says they were not sent)."""
    url = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if url:
        return url
    grpc = protocol() == "grpc"
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or (_DEFAULT_GRPC if grpc else _DEFAULT_HTTP)
    return base if grpc else f"{base.removesuffix('/')}/v1/traces"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a package above it is missing
        return False


def check_protocol() -> None:
    """A settings error for a protocol the SDK does not ship, or gRPC without its
    package: said before a run starts, not when its first span is made."""
    asked = protocol()
    if asked == "grpc" and not _installed(GRPC_MODULE):
        raise SettingsError(
            "OTLP over gRPC needs the SDK's gRPC exporter, which is not installed",
            f"run `{GRPC_INSTALL}`",
        )
    if asked not in ("http/protobuf", "grpc"):
        raise SettingsError(
            f"the OTLP protocol {asked!r} is not one OpenTelemetry's Python SDK sends",
            "set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf or grpc",
        )


def sdk_exporter() -> SpanExporter:
    """The SDK's OTLP span exporter for the protocol asked for (check_protocol's errors
    otherwise)."""
    check_protocol()
    asked = protocol()
    if asked == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
        OTLPSpanExporter as GRPCSpanExporter,
    )

    made: SpanExporter = GRPCSpanExporter()
    return made


def quiet() -> None:
    """The SDK's exporters and processors print nothing (see QUIET_LOGGERS)."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


class Counted(SpanProcessor):
    """Counts the sampled spans that end, which the batch processor after it is to send."""

    def __init__(self) -> None:
        self.ended = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            self.ended += 1  # one thread at a time: the event loop's


class Sending(SpanExporter):
    """The SDK's exporter, counting the spans it sent. `give_up` stops it: its waits
    between retries end, and what it is handed from then on is dropped unsent."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter
        self.sent = 0
        self.given_up = threading.Event()
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.given_up.is_set():
            return SpanExportResult.FAILURE
        result = self.exporter.export(spans)
        if result is SpanExportResult.SUCCESS:
            with self._lock:  # the worker's exports, and a flush's on another thread
                self.sent += len(spans)
        return result

    def give_up(self) -> None:
        if not self.given_up.is_set():
            self.given_up.set()
            self.exporter.shutdown()  # interrupts a retry's wait

    def shutdown(self) -> None:
        if not self.given_up.is_set():
            self.given_up.set()
            self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)
