"""Whether a run is traced, and the tracer its spans go to.

OpenTelemetry is an optional extra: nothing here imports it until a run is traced, so
the package imports and runs without it. The exporter is OTLP over HTTP; every other
choice (endpoint, headers, timeout, compression, sampler, batching, resource
attributes, OTEL_SDK_DISABLED) is the SDK's own reading of the standard OTEL_*
variables."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from dagmca.errors import SettingsError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

    from dagmca.tracing.finished import Finished

INSTALL = "pip install 'dagmca[otel]'"
# either one turns tracing on: where spans are to be sent is a request to send them
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
SERVICE = "dagmca"
SCOPE = "dagmca"
EVENT_LIMIT_VAR = "OTEL_SPAN_EVENT_COUNT_LIMIT"
MAX_EVENTS = 1_000_000  # a span's run events, when the variable above is not set

_lock = threading.Lock()
# dagmca's own provider, and the OTEL_* environment it was made for: a process whose
# environment changes (a test pointing at another receiver) gets a new one
_provider: TracerProvider | None = None
_finished: Finished | None = None  # its finished spans (finished.py)
_made_for: tuple[tuple[str, str], ...] = ()


def installed() -> bool:
    """Whether the otel extra (the SDK and the OTLP/HTTP exporter) can be imported."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


def wanted(otel: bool) -> bool:
    """Whether a run with the `otel` setting is traced. `otel` without the extra is a
    settings error (`require`); an endpoint variable alone, which a shell may set for
    every program it starts, traces only where the extra is installed."""
    if otel:
        return True
    return any(os.environ.get(name) for name in ENDPOINT_VARS) and installed()


def require(otel: bool) -> None:
    """The one-line settings error of `otel` on an install without the extra."""
    if otel and not installed():
        raise SettingsError("--otel needs OpenTelemetry, which is not installed", f"run `{INSTALL}`")


def _environment() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OTEL_")))


def tracer() -> tuple[Tracer, Finished | None]:
    """The tracer of dagmca's spans, and the maker of its finished spans where they can
    skip the tracer (None: the tracer makes them all). A tracer provider the host
    application installed globally is used as it is (its exporters, its resource);
    otherwise dagmca's own, made once per OTEL_* environment and never installed
    globally (a library must not take that decision from its host)."""
    from opentelemetry import trace

    host = trace.get_tracer_provider()
    if not isinstance(host, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return host.get_tracer(SCOPE), None
    global _provider, _finished, _made_for
    with _lock:
        env = _environment()
        if _provider is None or env != _made_for:
            if _provider is not None:
                if _finished is not None:
                    _finished.hand_over()
                _provider.shutdown()  # its spans are sent before it goes
            (_provider, _finished), _made_for = _new_provider(), env
        return _provider.get_tracer(SCOPE), _finished


def _new_provider() -> tuple[TracerProvider, Finished | None]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, StaticSampler, TraceIdRatioBased
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from dagmca.tracing import finished
    from dagmca.tracing.otlp import Exporter

    resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE}))
    # A phase's span carries the run events of the whole phase (every stub check of a
    # revisit, every selection and merge), far past the SDK's default of 128 events a
    # span, past which the oldest are dropped without a word. The standard variable
    # still sets another limit.
    events = None if os.environ.get(EVENT_LIMIT_VAR) else MAX_EVENTS
    provider = TracerProvider(resource=resource, span_limits=SpanLimits(max_events=events))
    # batched on the SDK's own thread: a run never waits for the collector
    exporter = Exporter()
    processor = BatchSpanProcessor(exporter)
    provider.add_span_processor(processor)
    # the scope of the provider's tracer for SCOPE (no version, schema or attributes)
    scope = InstrumentationScope(SCOPE)
    per_trace = isinstance(provider.sampler, StaticSampler | TraceIdRatioBased | ParentBased)
    made = finished.for_provider(processor, provider.resource, scope, deferred=True, per_trace=per_trace)
    exporter.deferred = made  # the calls' spans are made on the exporter's thread
    return provider, made


def flush(timeout_s: float = 5.0) -> None:
    """Send the spans still batched, waiting at most `timeout_s`: before a process
    leaves without running its exit handlers (the CLI does), and in tests. Nothing to
    do, and nothing imported, when no run was traced."""
    with _lock:
        provider, made = _provider, _finished
    if made is not None:
        made.hand_over()
    if provider is not None:
        provider.force_flush(int(timeout_s * 1000))
