"""The OTLP/HTTP exporter, with the spans encoded by dagmca (wire.py).

The endpoint, headers, timeout, compression, TLS, retries and the request size limit
are the SDK exporter's own; its self-metrics of each export are not kept. A plain-HTTP
endpoint gets a lighter transport under the SDK's client (transport.py). Imported only
when a run is traced."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from dagmca.tracing.finished import Finished, Later, each_call
from dagmca.tracing.wire import Encoder

if TYPE_CHECKING:
    from opentelemetry.exporter.http.transport._base import BaseHTTPTransport

_logger = logging.getLogger(__name__)
_BATCH = 512  # the SDK's default export batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)


def batch_size() -> int:
    """The spans of a request: the batch processor's, from the variable it reads (the
    calls a batch takes along join it, in requests of this many)."""
    try:
        size = int(os.environ.get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", _BATCH))
    except ValueError:
        return _BATCH
    return size if size > 0 else _BATCH


def requests(
    calls: Sequence[Later], spans: Sequence[ReadableSpan], batch: int
) -> Iterator[tuple[Sequence[Later], Sequence[ReadableSpan]]]:
    """The calls and spans of each request, at most `batch` spans a request (a call is
    one span, or two with its debate span), the calls first."""
    taken: list[Later] = []
    count = 0
    for item in calls:
        size = 2 if item.outside else 1
        if taken and count + size > batch:
            yield taken, ()
            taken, count = [], 0
        taken.append(item)
        count += size
    start = 0
    while taken or start < len(spans):
        room = max(batch - count, 0)
        yield taken, spans[start : start + room]
        start += room
        taken, count = [], 0


def _plain_http() -> BaseHTTPTransport | None:
    """The standard library's transport, where the endpoint is plain HTTP and nothing
    asks for the SDK's (transport.py); None on an exporter without transports."""
    try:
        from dagmca.tracing.transport import endpoint, transport_for
    except ImportError:
        return None
    return transport_for(endpoint())


class Exporter(OTLPSpanExporter):
    """The SDK's OTLP/HTTP span exporter, sending dagmca's encoding of the spans. Where
    the installed exporter is not laid out as this one expects (another version), or a
    batch cannot be encoded here, the SDK's own `export` does the whole of it. With
    `deferred` set, each batch also carries the calls queued there since the last one
    (finished.py), written here, on the exporter's thread."""

    def __init__(self) -> None:
        transport = _plain_http()
        if transport is None:
            super().__init__()
        else:
            try:
                super().__init__(_transport=transport)
            except TypeError:  # an exporter whose transport is not pluggable: its own
                super().__init__()
        self._encoder = Encoder()
        self._exporting = threading.Lock()  # one encoder: one export at a time
        self.deferred: Finished | None = None
        self.batch = batch_size()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._exporting:  # the worker's exports, and a flush's on the caller's thread
            calls = self.deferred.take() if self.deferred is not None else []
            result = SpanExportResult.SUCCESS
            for some_calls, some_spans in requests(calls, spans, self.batch):
                if self._export(some_calls, some_spans) is not SpanExportResult.SUCCESS:
                    result = SpanExportResult.FAILURE
            return result

    def _export(self, calls: Sequence[Later], spans: Sequence[ReadableSpan]) -> SpanExportResult:
        send = getattr(getattr(self, "_client", None), "export", None)
        if getattr(self, "_shutdown", True) or not callable(send):
            return super().export([*self._spans(calls), *spans])
        try:
            written = self._encoder.calls(calls, self.deferred) if calls and self.deferred else None
            data = self._encoder.encode(spans, written)
        except Exception:  # the SDK's encoder says what it cannot encode, and why
            return super().export([*self._spans(calls), *spans])
        limit = getattr(self, "_max_request_size", None)
        if isinstance(limit, int) and 0 < limit < len(data):  # dropped, as the SDK drops it (0: no limit)
            _logger.warning("Dropping span batch: %d bytes exceeds max_request_size %d", len(data), limit)
            return SpanExportResult.FAILURE
        sent = send(data)
        if getattr(sent, "success", False):
            return SpanExportResult.SUCCESS
        _logger.debug("OTLP export failed: %s", getattr(sent, "error", None))
        return SpanExportResult.FAILURE

    def _spans(self, calls: Sequence[Later]) -> list[ReadableSpan]:
        """The calls' spans as span objects, for the SDK's encoder. A call whose spans
        cannot be made is left out (and logged), not its batch."""
        return each_call(calls, self.deferred.spans) if self.deferred is not None else []
