"""OpenTelemetry traces of a run, opt-in (`--otel`, or an OTLP endpoint variable):
session -> phase -> debate -> round -> model call, model calls in the GenAI semantic
conventions, prompt and reply text only with `--otel-content`.

setup.py decides whether a run is traced and makes the tracer; hooks.py is what the
rest of dagmca calls (a no-op when untraced); spans.py makes the spans; genai.py turns a
call and a run event into attributes; otlp.py picks the SDK's OTLP exporter and counts
what it sent."""

from typing import TYPE_CHECKING

from dagmca.tracing.genai import Call
from dagmca.tracing.hooks import (
    active,
    call,
    debate,
    event,
    group,
    phase,
    round_end,
    round_start,
    session,
    trace_id,
)
from dagmca.tracing.setup import INSTALL, flush, installed, require, wanted

if TYPE_CHECKING:  # the type only: importing spans.py imports opentelemetry
    from dagmca.tracing.spans import Round

__all__ = [
    "INSTALL",
    "Call",
    "Round",
    "active",
    "call",
    "debate",
    "event",
    "flush",
    "group",
    "installed",
    "phase",
    "require",
    "round_end",
    "round_start",
    "session",
    "trace_id",
    "wanted",
]
