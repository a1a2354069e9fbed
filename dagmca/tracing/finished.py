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
this does not apply), `for_provider` gives None and the tracer makes every span.

Where the spans go to dagmca's own exporter, a call's spans are not even made on the
event loop: the call, the context it ended in and its debate's run are queued (`put`),
and the exporter writes its spans on its own thread when it next sends a batch, straight
from the call (wire.py: no span object is made for it). The session's span ends after
its last call, so a batch sent at or after that end carries every call queued before
it."""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, TypeVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode

from dagmca.tracing import genai
from dagmca.tracing.genai import Attributes

_logger = logging.getLogger(__name__)
T = TypeVar("T")
UNSET = Status(StatusCode.UNSET)  # immutable: one for every span that has no status
KIND = "dagmca.span"  # what a span is in dagmca's tree: session, phase, debate, round
# more attributes (or links) than a call span ever has: below this, a count limit could cut one
_FEWEST_ATTRIBUTES = 64


def debate_attributes(call: genai.Call) -> Attributes:
    """The debate span of a call for another debate than the run it ended in."""
    return {KIND: "debate", "dagmca.debate": call.debate, "dagmca.debate.part": call.phase}


def work_for(run: SpanContext | None) -> list[Link]:
    """That debate span's link to the debate's run, when the run is in this trace."""
    return [Link(run, {"dagmca.link": "work_for"})] if run is not None else []


class Later(NamedTuple):
    """A call whose spans are made when they are sent (see `Finished.later`): what the
    event loop knew when it ended, and no more."""

    call: genai.Call
    # the context where the call ended, whose current span is its parent: a context
    # does not change, so the span is looked up when the spans are made
    context: Context
    outside: bool  # for another debate than the run it ended in: it gets a debate span
    run: SpanContext | None  # that debate's run, which the debate span links to
    attributes: Attributes | None  # made already (with content: its messages may change)


class Finished:
    def __init__(
        self,
        processor: SpanProcessor,
        resource: Resource,
        scope: InstrumentationScope,
        *,
        deferred: bool = False,
        per_trace: bool = True,
    ) -> None:
        self._processor = processor
        # whether the provider's sampler decides once per trace (its built-in samplers
        # do, for a tree of local spans): then a run asks once, for its own span; a
        # sampler that decides span by span has each call's parent asked (`sampled_parent`)
        self.per_trace = per_trace
        self.resource = resource  # of the spans made here, as of the provider's tracer
        self.scope = scope
        self._ids: IdGenerator = RandomIdGenerator()
        self._later: deque[Later] = deque()  # appended on the loop, taken on the exporter's thread
        if hasattr(os, "register_at_fork"):  # a forked child sends none of its parent's calls
            os.register_at_fork(after_in_child=self._later.clear)
        # A call's spans, for a caller that knows its run's trace is sampled (a trace not
        # sampled has no span end to carry the call into a batch). `deferred`: the
        # exporter the processor sends to takes the queued calls (`take`) and writes them
        # with its next batch, so this is the queue's own append (the hook runs once a
        # call, on the event loop, and is kept to the least); otherwise made now.
        self.put: Callable[[Later], object] = self._later.append if deferred else self._send

    def _send(self, item: Later) -> bool:
        """The call's spans to the processor; whether it had any (a trace not sampled
        has none)."""
        spans = self.spans(item)
        for span in spans:
            self._processor.on_end(span)
        return bool(spans)

    def hand_over(self) -> None:
        """Before a flush or a shutdown, where no span may be left to carry the queued
        calls into a batch: the first one's spans go to the processor, so its next
        export runs and takes the rest (in requests of a batch each; all of them at once
        could overflow the processor's queue)."""
        while True:
            try:
                item = self._later.popleft()
            except IndexError:
                return
            if self._send(item):  # one the processor takes (past any it would not)
                return

    def take(self) -> list[Later]:
        """Every call queued so far, oldest first, for the exporter to write (wire.py)."""
        taken: list[Later] = []
        while True:
            try:
                taken.append(self._later.popleft())
            except IndexError:
                return taken

    def spans(self, item: Later) -> list[ReadableSpan]:
        """A call's span, and first the debate span it sits in when it needs one; none
        where its parent is not sampled (a sampler that decides span by span)."""
        call, parent = item.call, sampled_parent(item.context)
        if parent is None:
            return []
        made: list[ReadableSpan] = []
        if item.outside:
            debate = self.debate_span(call, parent, item.run)
            made.append(debate)
            parent = debate.context
        attributes = item.attributes or genai.attributes(call, content=False)  # never empty
        status = Status(StatusCode.ERROR, call.error) if call.error else UNSET
        span = self._readable(
            genai.name(call), parent, start_ns=call.start_ns, end_ns=call.end_ns, attributes=attributes,
            kind=SpanKind.CLIENT, status=status,
        )  # fmt: skip
        made.append(span)
        return made

    def debate_span(self, call: genai.Call, parent: SpanContext, run: SpanContext | None) -> ReadableSpan:
        """The span of a call's debate, over the call's time, when the call was that
        debate's work outside its run (`Later.outside`)."""
        return self._readable(
            f"debate {call.phase}", parent, start_ns=call.start_ns, end_ns=call.end_ns,
            attributes=debate_attributes(call), links=work_for(run),
        )  # fmt: skip

    def span_id(self) -> int:
        """A new span's id, as the SDK's tracer would make it."""
        return self._ids.generate_span_id()

    def _readable(
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
    ) -> ReadableSpan:
        context = SpanContext(
            parent.trace_id,
            self.span_id(),
            is_remote=False,
            trace_flags=parent.trace_flags,
            trace_state=parent.trace_state,
        )
        return ReadableSpan(
            name,
            context=context,
            parent=parent,
            resource=self.resource,
            attributes=attributes,
            links=links,
            kind=kind,
            status=status,
            start_time=start_ns,
            end_time=end_ns,
            instrumentation_scope=self.scope,
        )


def each_call(items: Sequence[Later], make: Callable[[Later], Iterable[T]]) -> list[T]:
    """What `make` makes of every queued call, in order. A call it cannot make is left
    out (and logged), not its batch."""
    made: list[T] = []
    for item in items:
        try:
            made.extend(make(item))
        except Exception:
            _logger.exception("dagmca: a call's span could not be made")
    return made


def sampled(context: Context) -> bool:
    """Whether the trace of the span current in `context` is sampled: every sampler the
    SDK reads from OTEL_TRACES_SAMPLER decides once per trace, so a traced run asks
    once, for its own span, and its calls' spans follow."""
    return sampled_parent(context) is not None


def sampled_parent(context: Context) -> SpanContext | None:
    """The span current in `context`, as a parent: None where it is not sampled."""
    parent = trace.get_current_span(context).get_span_context()
    return parent if parent.is_valid and parent.trace_flags.sampled else None


def for_provider(
    processor: SpanProcessor,
    resource: Resource,
    scope: InstrumentationScope,
    *,
    deferred: bool = False,
    per_trace: bool = True,
) -> Finished | None:
    """Finished spans for dagmca's own provider, unless a span limit is set. `deferred`:
    the processor's exporter takes the queued calls when it sends (otlp.Exporter)."""
    limits = SpanLimits()
    counts = (
        limits.max_span_attributes,
        limits.max_link_attributes,
        limits.max_links,
        limits.max_event_attributes,
    )
    bounded = (
        limits.max_attribute_length is not None
        or limits.max_span_attribute_length is not None
        or any(count is not None and count < _FEWEST_ATTRIBUTES for count in counts)  # 0 is a limit
    )
    return None if bounded else Finished(processor, resource, scope, deferred=deferred, per_trace=per_trace)
