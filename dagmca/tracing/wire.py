"""The OTLP trace request in the protobuf wire format, written by dagmca.

The SDK's encoder builds a protobuf object for every span, event, attribute and value
before serialising them; on a traced run that is most of what tracing costs. This
writes the same ExportTraceServiceRequest straight in the wire format (the OTLP
protocol is stable), and an attribute whose key and value were already written (a
model's name, an agent, a phase, a debate id: most of them) is taken from a cache. A
queued call's span (finished.py) is written straight from the call, with no span
object made for it: the attributes calls have in common once, its measures in place.
Imported only when a run is traced."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from dagmca.tracing import genai
from dagmca.tracing.finished import Finished, Later, each_call, sampled_parent

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
_CLIENT = _KINDS[SpanKind.CLIENT.value]
_UNSET = b"\x7a\x00"  # an empty Status field
_ERROR = StatusCode.ERROR.value
_STABLE = attrgetter(*genai.STABLE_FIELDS)  # a Call -> the tuple of those fields
_LOCAL_FLAGS = b"\x85\x01" + _FIXED32.pack(_HAS_IS_REMOTE)
_REMOTE_FLAGS = b"\x85\x01" + _FIXED32.pack(_HAS_IS_REMOTE | _IS_REMOTE)


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
        self._keys: dict[str, bytes] = {}  # an attribute's key -> its field
        self._trace_id, self._trace_field = -1, b""  # no trace's id
        # a call's STABLE_FIELDS -> the attributes they make (genai.stable_attributes)
        self._alike: dict[tuple[tuple[object, ...], type], bytes] = {}

    def encode(self, spans: Sequence[ReadableSpan], first: Written | None = None) -> bytes:
        """The request's bytes: `first` (spans written already, of one resource and
        scope: `calls`), then `spans`."""
        # grouped by resource, then by scope
        groups: dict[int, tuple[Any, dict[int, tuple[Any, list[bytes]]]]] = {}
        resources, scopes = _Firsts(), _Firsts()
        last: tuple[object, object] | None = None
        encoded: list[bytes] = []
        if first is not None and first.spans:
            by_scope = groups.setdefault(resources.of(first.resource), (first.resource, {}))[1]
            by_scope.setdefault(scopes.of(first.scope), (first.scope, []))[1].extend(first.spans)
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
        parts = [self._trace(ctx.trace_id), b"\x12\x08" + ctx.span_id.to_bytes(8, "big")]
        state = ctx.trace_state
        if state:
            parts.append(_state(state))
        parent = span.parent
        if parent is not None:
            parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
        parts.append(self._name(span.name))
        parts.append(_KINDS[span.kind.value])
        parts.append(_times(span.start_time, span.end_time))
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
        parts.append(_status(status.status_code.value, status.description))
        remote = parent is not None and parent.is_remote
        parts.append(_REMOTE_FLAGS if remote else _LOCAL_FLAGS)
        return b"".join(parts)

    def calls(self, items: Sequence[Later], made: Finished) -> Written:
        """The spans of queued calls, written straight from the calls: the bytes `_span`
        writes for the spans `made.spans` makes of them (tests/test_tracing.py compares
        them). A call whose spans cannot be written is left out (and logged), not its
        batch."""
        return Written(made.resource, made.scope, each_call(items, partial(self._call, made=made)))

    def _call(self, item: Later, made: Finished) -> list[bytes]:
        call = item.call
        parent = sampled_parent(item.context)
        if parent is None:  # as `made.spans`
            return []
        spans = []
        if item.outside:  # seldom: a span object, written as any other
            debate = made.debate_span(call, parent, item.run)
            spans.append(self._span(debate))
            parent = debate.context
        if item.attributes is not None:  # with content: made on the loop
            attributes = self._attributes(b"\x4a", item.attributes)
        else:  # what calls alike share, written once; then the call's measures
            # the fields are taken to be of their declared types (an int count, a bool
            # flag), but a float may be an int: a temperature of 1 and one of 1.0 are
            # alike as keys, not as attributes
            alike = (_STABLE(call), type(call.temperature))
            shared = self._alike.get(alike)
            if shared is None:
                if len(self._alike) >= _CACHE_SIZE:
                    self._alike.clear()
                shared = self._alike[alike] = self._attributes(b"\x4a", genai.stable_attributes(call))
            attributes = shared + self._attributes(b"\x4a", genai.measures(call))
        parts = [self._trace(parent.trace_id), b"\x12\x08" + made.span_id().to_bytes(8, "big")]
        if parent.trace_state:
            parts.append(_state(parent.trace_state))
        parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
        parts.append(self._name(genai.name(call)))
        parts.append(_CLIENT)
        parts.append(_times(call.start_ns, call.end_ns))
        parts.append(attributes)
        parts.append(_status(_ERROR, call.error) if call.error else _UNSET)
        parts.append(_REMOTE_FLAGS if parent.is_remote else _LOCAL_FLAGS)
        spans.append(b"".join(parts))
        return spans

    def _trace(self, trace_id: int) -> bytes:
        if trace_id != self._trace_id:  # a batch is mostly one trace's: its id written once
            self._trace_id, self._trace_field = trace_id, b"\x0a\x10" + trace_id.to_bytes(16, "big")
        return self._trace_field

    def _name(self, name: str) -> bytes:
        field = self._names.get(name)
        if field is None:
            if len(self._names) >= _CACHE_SIZE:
                self._names.clear()
            field = self._names[name] = _field(b"\x2a", name.encode())
        return field

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
            # a number (tokens, a cost, a latency) is seldom seen twice: its key is
            # cached, its value written in place
            if kind is int or kind is float:
                head = self._keys.get(key)
                if head is None:
                    head = self._key(key)
                if kind is int:
                    number = _varint(value if value >= 0 else value + _INT64)
                    pair = head + b"\x12" + _SMALL[len(number) + 1] + b"\x18" + number
                else:
                    pair = head + b"\x12\x09\x21" + _DOUBLE.pack(value)
                parts.append(tag + _varint(len(pair)) + pair)
                continue
            # the key a value is cached under: a string never equals a number, a bool
            # equals an int (True == 1), a list of strings (finish reasons) is hashed as
            # a tuple; a list of anything else is not kept
            if kind is str:
                known = cache.get((key, value))
                cached: tuple[object, ...] = (key, value)
            elif kind is bool:
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

    def _key(self, key: str) -> bytes:
        """A KeyValue's key field (none for an empty key), kept."""
        if len(self._keys) >= _CACHE_SIZE:
            self._keys.clear()
        head = self._keys[key] = _field(b"\x0a", key.encode()) if key else b""
        return head


class Written(NamedTuple):
    """Spans written already, of one resource and scope."""

    resource: Any
    scope: Any
    spans: list[bytes]


def _state(state: Any) -> bytes:
    return _field(b"\x1a", ",".join(f"{k}={v}" for k, v in state.items()).encode())


def _times(start: int | None, end: int | None) -> bytes:
    if start and end:
        return _TIMES.pack(0x39, start, 0x41, end)
    return (b"\x39" + _FIXED64.pack(start) if start else b"") + (b"\x41" + _FIXED64.pack(end) if end else b"")


def _status(code: int, description: str | None) -> bytes:
    if not (code or description):
        return _UNSET  # an empty Status, written as the SDK writes it
    described = _field(b"\x12", description.encode()) if description else b""
    return _field(b"\x7a", described + (b"\x18" + _varint(code) if code else b""))


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
