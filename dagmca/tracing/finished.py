"""Spans of work that has already ended (a model call), handed to the span processor
whole.

A call's span is made after the call, with its start and end known. Through the
tracer it would be started, its attributes copied and checked one by one, then ended
and copied again: on a traced run that is most of what the spans cost on the event
loop. With dagmca's own provider (made in setup.py, which knows its sampler, its one
processor and its limits) the span is written as the finished span the processor
takes, with what the tracer would have given it: a new span id in the parent's trace,
the parent's flags and trace state (every sampler the SDK reads from OTEL_TRACES_SAMPLER
samples a child as its trace was sampled). Where the run's spans go to a host's
provider, or a span limit is set (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT and the like, which
this does not apply), `for_provider` gives None and the tracer makes every span."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode

from dagmca.tracing.genai import Attributes

UNSET = Status(StatusCode.UNSET)  # immutable: one for every span that has no status
# more attributes (or links) than a call span ever has: below this, a count limit could cut one
_FEWEST_ATTRIBUTES = 64


class Finished:
    def __init__(self, processor: SpanProcessor, resource: Resource, scope: InstrumentationScope) -> None:
        self._processor = processor
        self._resource = resource
        self._scope = scope
        self._ids: IdGenerator = RandomIdGenerator()

    def span(
        self,
        name: str,
        parent: SpanContext,
        *,
        start_ns: int,
        end_ns: int,
        attributes: Attributes,
        kind: SpanKind = SpanKind.INTERNAL,
        links: Sequence[Link] = (),
        status: Status = UNSET,
    ) -> SpanContext | None:
        """The span, sent; its context (None: its trace is not sampled, nothing sent)."""
        if not (parent.is_valid and parent.trace_flags.sampled):
            return None
        context = SpanContext(
            parent.trace_id,
            self._ids.generate_span_id(),
            is_remote=False,
            trace_flags=parent.trace_flags,
            trace_state=parent.trace_state,
        )
        self._processor.on_end(
            ReadableSpan(
                name,
                context=context,
                parent=parent,
                resource=self._resource,
                attributes=attributes,
                links=links,
                kind=kind,
                status=status,
                start_time=start_ns,
                end_time=end_ns,
                instrumentation_scope=self._scope,
            )
        )
        return context


def for_provider(
    processor: SpanProcessor, resource: Resource, scope: InstrumentationScope
) -> Finished | None:
    """Finished spans for dagmca's own provider, unless a span limit is set."""
    limits = SpanLimits()
    counts = (limits.max_span_attributes, limits.max_link_attributes, limits.max_links)
    bounded = (
        limits.max_attribute_length is not None
        or limits.max_span_attribute_length is not None
        or any(count is not None and count < _FEWEST_ATTRIBUTES for count in counts)  # 0 is a limit
    )
    return None if bounded else Finished(processor, resource, scope)
