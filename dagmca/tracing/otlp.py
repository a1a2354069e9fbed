"""The OTLP/HTTP exporter, with the spans encoded by dagmca.

The SDK's encoder builds a protobuf object for every span, event, attribute and value
before serialising them; on a traced run that is most of what tracing costs. This
writes the same ExportTraceServiceRequest straight in the protobuf wire format (the
OTLP protocol is stable), and an attribute whose key and value were already written
(a model's name, an agent, a phase, a debate id: most of them) is taken from a cache.
The endpoint, headers, timeout, compression, TLS, retries and the request size limit
are the SDK exporter's own; its self-metrics of each export are not kept. Imported only
when a run is traced."""

from __future__ import annotations

import logging
import os
import struct
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from dagmca.tracing.finished import Finished

_logger = logging.getLogger(__name__)

_DOUBLE = struct.Struct("<d")
_FIXED64 = struct.Struct("<Q")
_FIXED32 = struct.Struct("<I")
# the span flags OTLP defines: the parent's is-remote bit is known, and whether it is set
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200
# scalar attributes seen before, written once: a bound, as some values never repeat
_CACHE_SIZE = 8192
_INT64 = 1 << 64
_TIMES = struct.Struct("<BQBQ")  # start and end time: two fixed64 fields, tags 7 and 8
_KINDS = [b"\x30" + bytes((kind + 1,)) for kind in range(5)]  # OTLP counts from UNSPECIFIED
_LOCAL_FLAGS = b"\x85\x01" + _FIXED32.pack(_HAS_IS_REMOTE)
_REMOTE_FLAGS = b"\x85\x01" + _FIXED32.pack(_HAS_IS_REMOTE | _IS_REMOTE)
_BATCH = 512  # the SDK's default export batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes or a message."""
    return tag + _varint(len(payload)) + payload


class Encoder:
    """ExportTraceServiceRequest bytes from the SDK's finished spans, field for field what
    the SDK's own encoder produces (tests/test_tracing.py compares them)."""

    def __init__(self) -> None:
        # an attribute seen before -> its KeyValue message, length prefix included
        self._scalars: dict[tuple[object, ...], bytes] = {}
        self._names: dict[str, bytes] = {}  # a span's name -> its field
        self._trace_id, self._trace_field = -1, b""  # no trace's id

    def encode(self, spans: Sequence[ReadableSpan]) -> bytes:
        # grouped by resource, then by scope
        groups: dict[int, tuple[Any, dict[int, tuple[Any, list[bytes]]]]] = {}
        resources, scopes = _Firsts(), _Firsts()
        last: tuple[object, object] | None = None
        encoded: list[bytes] = []
        for span in spans:
            resource = span.resource
            scope = span.instrumentation_scope
            if last is None or resource is not last[0] or scope is not last[1]:  # mostly the same two
                by_scope = groups.setdefault(resources.of(resource), (resource, {}))[1]
                encoded = by_scope.setdefault(scopes.of(scope), (scope, []))[1]
                last = (resource, scope)
            encoded.append(self._span(span))
        out = []
        for resource, by_scope in groups.values():
            body = [_field(b"\x0a", self._attributes(b"\x0a", resource.attributes))]
            for scope, encoded in by_scope.values():
                body.append(_field(b"\x12", self._scope_spans(scope, encoded)))
            if resource.schema_url:
                body.append(_field(b"\x1a", resource.schema_url.encode()))
            out.append(_field(b"\x0a", b"".join(body)))
        return b"".join(out)

    def _scope_spans(self, scope: Any, spans: list[bytes]) -> bytes:
        head = b""
        if scope is not None:
            parts = []
            if scope.name:
                parts.append(_field(b"\x0a", scope.name.encode()))
            if scope.version:
                parts.append(_field(b"\x12", scope.version.encode()))
            parts.append(self._attributes(b"\x1a", scope.attributes))
            head = b"".join(parts)
        tail = _field(b"\x1a", scope.schema_url.encode()) if scope is not None and scope.schema_url else b""
        return b"".join((_field(b"\x0a", head), *(_field(b"\x12", s) for s in spans), tail))

    def _span(self, span: ReadableSpan) -> bytes:
        ctx = span.get_span_context()
        if ctx is None:  # not a span the SDK made: its encoder is left to say so
            raise ValueError("a span without a context")
        if ctx.trace_id != self._trace_id:  # a batch is mostly one trace's: its id written once
            self._trace_id, self._trace_field = ctx.trace_id, b"\x0a\x10" + ctx.trace_id.to_bytes(16, "big")
        parts = [self._trace_field, b"\x12\x08" + ctx.span_id.to_bytes(8, "big")]
        state = ctx.trace_state
        if state:
            parts.append(_field(b"\x1a", ",".join(f"{k}={v}" for k, v in state.items()).encode()))
        parent = span.parent
        if parent is not None:
            parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
        name = self._names.get(span.name)
        if name is None:
            if len(self._names) >= _CACHE_SIZE:
                self._names.clear()
            name = self._names[span.name] = _field(b"\x2a", span.name.encode())
        parts.append(name)
        parts.append(_KINDS[span.kind.value])
        start, end = span.start_time, span.end_time
        if start and end:
            parts.append(_TIMES.pack(0x39, start, 0x41, end))
        else:
            if start:
                parts.append(b"\x39" + _FIXED64.pack(start))
            if end:
                parts.append(b"\x41" + _FIXED64.pack(end))
        # read once each: the SDK's properties copy what they return
        parts.append(self._attributes(b"\x4a", span.attributes))
        if span.dropped_attributes:
            parts.append(b"\x50" + _varint(span.dropped_attributes))
        for event in span.events:
            parts.append(_field(b"\x5a", self._event(event)))
        if span.dropped_events:
            parts.append(b"\x60" + _varint(span.dropped_events))
        for link in span.links:
            parts.append(_field(b"\x6a", self._link(link)))
        if span.dropped_links:
            parts.append(b"\x70" + _varint(span.dropped_links))
        status = span.status
        code = status.status_code.value
        if code or status.description:
            described = _field(b"\x12", status.description.encode()) if status.description else b""
            parts.append(_field(b"\x7a", described + (b"\x18" + _varint(code) if code else b"")))
        else:
            parts.append(b"\x7a\x00")  # an empty Status, written as the SDK writes it
        remote = parent is not None and parent.is_remote
        parts.append(_REMOTE_FLAGS if remote else _LOCAL_FLAGS)
        return b"".join(parts)

    def _event(self, event: Any) -> bytes:
        parts = []
        if event.timestamp:
            parts.append(b"\x09" + _FIXED64.pack(event.timestamp))
        parts.append(_field(b"\x12", event.name.encode()))
        parts.append(self._attributes(b"\x1a", event.attributes))
        if event.dropped_attributes:
            parts.append(b"\x20" + _varint(event.dropped_attributes))
        return b"".join(parts)

    def _link(self, link: Any) -> bytes:
        ctx = link.context
        parts = [
            b"\x0a\x10" + ctx.trace_id.to_bytes(16, "big"),
            b"\x12\x08" + ctx.span_id.to_bytes(8, "big"),
            self._attributes(b"\x22", link.attributes),
        ]
        if link.dropped_attributes:
            parts.append(b"\x28" + _varint(link.dropped_attributes))
        parts.append(b"\x35" + _FIXED32.pack(_HAS_IS_REMOTE | (_IS_REMOTE if ctx.is_remote else 0)))
        return b"".join(parts)

    def _attributes(self, tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
        """The repeated KeyValue field `tag` of a message."""
        if not attributes:
            return b""
        cache = self._scalars
        parts = []
        for key, value in attributes.items():
            kind = type(value)
            # the key a value is cached under: a string never equals a number, a bool
            # equals an int (True == 1), a list of strings (finish reasons) is hashed as
            # a tuple; a float (a cost, a latency) is seldom seen twice and not kept, nor
            # is a list of anything else
            if kind is str:
                known = cache.get((key, value))
                cached: tuple[object, ...] = (key, value)
            elif kind is int or kind is bool:
                cached = (key, kind, value)
                known = cache.get(cached)
            elif (kind is list or kind is tuple) and all(type(v) is str for v in value):
                cached = (key, tuple, tuple(value))  # [1] == [True] == [1.0]: strings only
                known = cache.get(cached)
            else:
                parts.append(tag + _length(_key_value(key, value)))
                continue
            if known is None:
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
                known = cache[cached] = _length(_key_value(key, value))
            parts.append(tag + known)
        return b"".join(parts)


class _Firsts:
    """The id standing for an object in a batch: the first equal object's. Compared once
    per object rather than hashed per span (a resource hashes itself as JSON)."""

    def __init__(self) -> None:
        self._ids: dict[int, int] = {}
        self._firsts: list[object] = []

    def of(self, obj: object) -> int:
        key = self._ids.get(id(obj))
        if key is None:
            key = next((id(f) for f in self._firsts if f == obj), None)
            if key is None:
                self._firsts.append(obj)
                key = id(obj)
            self._ids[id(obj)] = key
        return key


def _length(payload: bytes) -> bytes:
    return _varint(len(payload)) + payload


def _key_value(key: str, value: object) -> bytes:
    head = _field(b"\x0a", key.encode()) if key else b""
    return head + _field(b"\x12", _any(value))


def _any(value: object) -> bytes:
    """An AnyValue: one of its fields, always written (a oneof's zero is a value)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _field(b"\x0a", value.encode())
    if isinstance(value, int):
        return b"\x18" + _varint(value if value >= 0 else value + _INT64)
    if isinstance(value, float):
        return b"\x21" + _DOUBLE.pack(value)
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if isinstance(value, Mapping):
        pairs = b"".join(_field(b"\x0a", _key_value(str(k), v)) for k, v in value.items())
        return _field(b"\x32", pairs)
    if isinstance(value, Sequence):
        return _field(b"\x2a", b"".join(_field(b"\x0a", _any(v)) for v in value))
    raise TypeError(f"an attribute value of type {type(value).__name__}")


def batch_size() -> int:
    """The spans of a request: the batch processor's, from the variable it reads (the
    calls a batch takes along join it, in requests of this many)."""
    try:
        size = int(os.environ.get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", _BATCH))
    except ValueError:
        return _BATCH
    return size if size > 0 else _BATCH


class Exporter(OTLPSpanExporter):
    """The SDK's OTLP/HTTP span exporter, sending dagmca's encoding of the spans. Where
    the installed exporter is not laid out as this one expects (another version), or a
    batch cannot be encoded here, the SDK's own `export` does the whole of it. With
    `deferred` set, each batch also carries the calls queued there since the last one
    (finished.py), made here, on the exporter's thread."""

    def __init__(self) -> None:
        super().__init__()
        self._encoder = Encoder()
        self._exporting = threading.Lock()  # one encoder: one export at a time
        self.deferred: Finished | None = None
        self.batch = batch_size()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._exporting:  # the worker's exports, and a flush's on the caller's thread
            if self.deferred is not None:
                spans = [*self.deferred.take(), *spans]
            result = SpanExportResult.SUCCESS
            for start in range(0, len(spans), self.batch):  # the processor's batch, a request
                if self._export(spans[start : start + self.batch]) is not SpanExportResult.SUCCESS:
                    result = SpanExportResult.FAILURE
            return result

    def _export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        send = getattr(getattr(self, "_client", None), "export", None)
        if getattr(self, "_shutdown", True) or not callable(send):
            return super().export(spans)
        try:
            data = self._encoder.encode(spans)
        except Exception:  # the SDK's encoder says what it cannot encode, and why
            return super().export(spans)
        limit = getattr(self, "_max_request_size", None)
        if isinstance(limit, int) and len(data) > limit:  # dropped, as the SDK drops it
            _logger.warning("Dropping span batch: %d bytes exceeds max_request_size %d", len(data), limit)
            return SpanExportResult.FAILURE
        sent = send(data)
        if getattr(sent, "success", False):
            return SpanExportResult.SUCCESS
        _logger.debug("OTLP export failed: %s", getattr(sent, "error", None))
        return SpanExportResult.FAILURE
