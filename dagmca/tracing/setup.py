"""Whether a run is traced, and the tracer its spans go to.

OpenTelemetry is an optional extra: nothing here imports it until a run is traced, so
the package imports and runs without it. The spans go through the SDK's batch span
processor to its OTLP exporter (otlp.py); every choice (endpoint, protocol, headers,
timeout, compression, sampler, batching, resource attributes, OTEL_SDK_DISABLED) is the
SDK's own reading of the standard OTEL_* variables.

The end of a run waits a few seconds at most for the collector: one that is down or
too slow is let go, and the run says how many spans it did not take."""

from __future__ import annotations

import atexit
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dagmca.errors import SettingsError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

    from dagmca.tracing.otlp import Counted, Sending

INSTALL = "pip install 'dagmca[otel]'"
# either one turns tracing on: where spans are to be sent is a request to send them
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
SERVICE = "dagmca"
SCOPE = "dagmca"
EVENT_LIMIT_VAR = "OTEL_SPAN_EVENT_COUNT_LIMIT"
MAX_EVENTS = 1_000_000  # a span's run events, when the variable above is not set
# how long the end of a run waits for the collector to take the batched spans, and then
# for the exporter to stop once let go: a process exits within their sum of its run's end
FLUSH_S = 2.5
GIVE_UP_S = 1.0

_logger = logging.getLogger(__name__)


@dataclass
class _Own:
    """dagmca's own provider, what counts its spans, and the OTEL_* environment it was
    made for: a process whose environment changes (a test pointing at another receiver)
    gets a new one."""

    provider: TracerProvider
    counted: Counted
    sending: Sending
    endpoint: str
    made_for: tuple[tuple[str, str], ...]
    reported: int = 0  # spans already said to be dropped


_lock = threading.Lock()
_own: _Own | None = None
_exit_registered = False


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
    """The one-line settings error of `otel` on an install without the extra, or of an
    OTLP protocol it cannot send."""
    if otel and not installed():
        raise SettingsError("--otel needs OpenTelemetry, which is not installed", f"run `{INSTALL}`")
    if wanted(otel):  # the exporter's protocol, before anything is opened
        from dagmca.tracing.otlp import check_protocol

        check_protocol()


def _environment() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OTEL_")))


def tracer() -> Tracer:
    """The tracer of dagmca's spans. A tracer provider the host application installed
    globally is used as it is (its exporters, its resource); otherwise dagmca's own,
    made once per OTEL_* environment and never installed globally (a library must not
    take that decision from its host)."""
    from opentelemetry import trace

    host = trace.get_tracer_provider()
    if not isinstance(host, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return host.get_tracer(SCOPE)
    global _own, _exit_registered
    with _lock:
        env = _environment()
        if _own is None or env != _own.made_for:
            if _own is not None:
                _settle(_own, FLUSH_S, close=True)  # its spans are sent before it goes
            _own = _new_provider(env)
            if not _exit_registered:  # a library's host may exit without flushing
                atexit.register(_at_exit)
                _exit_registered = True
        return _own.provider.get_tracer(SCOPE)


def _new_provider(env: tuple[tuple[str, str], ...]) -> _Own:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from dagmca.tracing import otlp

    exporter = otlp.sdk_exporter()  # a settings error before anything is made
    otlp.quiet()
    resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE}))
    # A phase's span carries the run events of the whole phase (every stub check of a
    # revisit, every selection and merge), far past the SDK's default of 128 events a
    # span, past which the oldest are dropped without a word. The standard variable
    # still sets another limit.
    events = None if os.environ.get(EVENT_LIMIT_VAR) else MAX_EVENTS
    # shut down here (flush, _settle), within a bound: the SDK's own exit handler would
    # wait on a collector that does not answer
    provider = TracerProvider(
        resource=resource, span_limits=SpanLimits(max_events=events), shutdown_on_exit=False
    )
    counted, sending = otlp.Counted(), otlp.Sending(exporter)
    provider.add_span_processor(counted)
    # batched on the SDK's own thread: a run never waits for the collector
    provider.add_span_processor(BatchSpanProcessor(sending))
    return _Own(provider, counted, sending, otlp.endpoint(), env)


def _settle(own: _Own, timeout_s: float, *, close: bool) -> int:
    """Sends what is batched, waiting at most `timeout_s` (then the collector is let
    go, and what is left dropped); the spans dropped so far and not yet reported."""
    done = threading.Event()

    def send() -> None:
        try:
            own.provider.force_flush()
            if close:
                own.provider.shutdown()
        except Exception:  # a span exporter's failure is the dropped count's to say
            _logger.debug("dagmca: the spans could not be flushed", exc_info=True)
        finally:
            done.set()

    threading.Thread(target=send, name="dagmca-otel-flush", daemon=True).start()
    try:
        if not done.wait(timeout_s):
            own.sending.give_up()
            done.wait(GIVE_UP_S)
    except KeyboardInterrupt:  # another Ctrl-C: the user waits no longer
        own.sending.give_up()
    dropped = max(own.counted.ended - own.sending.sent - own.reported, 0)
    own.reported += dropped
    return dropped


def flush(timeout_s: float = FLUSH_S) -> str | None:
    """Send the spans still batched, waiting at most `timeout_s` for the collector:
    before a process leaves without running its exit handlers (the CLI does), and in
    tests. Returns the line that says how many spans no collector took (None: every one
    was sent). Nothing to do, and nothing imported, when no run was traced."""
    global _own
    with _lock:
        own = _own
        if own is None:
            return None
        dropped = _settle(own, timeout_s, close=False)
        if own.sending.given_up.is_set():
            _own = None  # let go: a later run gets a new exporter
    if not dropped:
        return None
    spans = "span was" if dropped == 1 else "spans were"
    return f"{dropped} {spans} dropped: no OTLP collector took them at {own.endpoint}"


def _at_exit() -> None:
    line = flush()
    if line is not None:
        _logger.warning("dagmca: %s", line)
