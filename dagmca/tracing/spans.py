"""The span tree of a traced run: session -> phase -> debate -> round -> model call.

Imported only when a run is traced. Parents come from the context (contextvars):
asyncio copies it into every task it creates, so a debate started during a phase is
that phase's child, and a call made during a round that round's. Branch debates run
side by side, so the debate a branch comes from is not its parent but a link."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import context as otel
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, Tracer

from dagmca.tracing import genai

KIND = "dagmca.span"  # what a span is in dagmca's tree: session, phase, debate, round
# the debate whose run a context is in: a call for another debate gets a span of its own
# for that debate (see `call`)
_RUN = otel.create_key("dagmca.debate")


def debate_attributes(call: genai.Call) -> genai.Attributes:
    """The debate span of a call for another debate than the run it ended in."""
    return {KIND: "debate", "dagmca.debate": call.debate, "dagmca.debate.part": call.phase}


def work_for(run: SpanContext | None) -> list[Link]:
    """That debate span's link to the debate's run, when the run is in this trace."""
    return [Link(run, {"dagmca.link": "work_for"})] if run is not None else []


class Round:
    """An open round's span, and the context to go back to when it ends."""

    def __init__(self, span: Span, before: Context) -> None:
        self.span = span
        self.before = before


class Tracing:
    """The spans of one traced session (or of a build's sessions: `group`). `content`:
    prompts, replies and the words of run events go into spans."""

    def __init__(self, tracer: Tracer, *, content: bool) -> None:
        self.tracer = tracer
        self.content = content
        self._top: Context | None = None  # the session's (or group's) own context
        self._phase: Span | None = None
        self.runs: dict[str, SpanContext] = {}  # debate id -> its run's span
        self._rounds: dict[str, Round] = {}  # debate id -> its open round
        self._running: dict[str, Span] = {}  # debate id -> its run's span, while it runs
        self._top_span: Span | None = None

    # -- the run's own span ------------------------------------------------------------
    @contextmanager
    def top(self, name: str, kind: str, attributes: Mapping[str, genai.AttrValue]) -> Iterator[None]:
        """The span of a session (or group) around the block, current inside it."""
        span = self.tracer.start_span(name, attributes={KIND: kind, **attributes})
        self._top_span = span
        self._top = trace.set_span_in_context(span)
        token = otel.attach(self._top)
        try:
            yield
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            self._end_phase()
            span.end()
            # also undoes the phases and rounds made current since, in this task
            otel.detach(token)

    def trace_id(self) -> str | None:
        ctx = trace.get_current_span().get_span_context()
        return trace.format_trace_id(ctx.trace_id) if ctx.is_valid else None

    # -- phases --------------------------------------------------------------------------
    def phase(self, name: str) -> None:
        """The session is in phase `name` from now: the last phase's span ends, the new
        one is current for the rest of this task (the work it starts inherits it)."""
        if self._top is None:
            return
        self._end_phase()
        span = self.tracer.start_span(f"phase {name}", context=self._top, attributes={KIND: "phase"})
        self._phase = span
        otel.attach(trace.set_span_in_context(span, self._top))  # undone when the session ends

    def _end_phase(self) -> None:
        if self._phase is not None:
            self._phase.end()
            self._phase = None

    # -- debates and rounds ----------------------------------------------------------------
    @contextmanager
    def debate(self, debate: str, *, origin: str, depth: int, parent: str | None) -> Iterator[None]:
        """A debate's run. A branch links to the run of the debate it branches from
        (when that ran in this trace)."""
        links = [Link(self.runs[parent], {"dagmca.link": "branches_from"})] if parent in self.runs else []
        attrs: genai.Attributes = {
            KIND: "debate",
            "dagmca.debate": debate,
            "dagmca.debate.origin": origin,
            "dagmca.debate.depth": depth,
            "dagmca.debate.part": "run",
        }
        if parent is not None:
            attrs["dagmca.debate.parent"] = parent
        span = self.tracer.start_span(f"debate {origin}", attributes=attrs, links=links)
        self.runs[debate] = span.get_span_context()
        self._running[debate] = span
        token = otel.attach(otel.set_value(_RUN, debate, trace.set_span_in_context(span)))
        try:
            yield
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            unclosed = self._rounds.pop(debate, None)
            if unclosed is not None:  # the run ended inside it (a failure, a cancel)
                unclosed.span.set_status(Status(StatusCode.ERROR, "unfinished"))
                unclosed.span.end()
            del self._running[debate]
            span.end()
            otel.detach(token)

    def round_start(self, debate: str, number: int) -> Round:
        """A round's span, current in this task until `round_end`."""
        before = otel.get_current()
        attrs: genai.Attributes = {KIND: "round", "dagmca.debate": debate, "dagmca.round": number}
        span = self.tracer.start_span(f"round {number}", context=before, attributes=attrs)
        otel.attach(trace.set_span_in_context(span, before))
        self._rounds[debate] = opened = Round(span, before)
        return opened

    def round_end(self, debate: str, opened: Round) -> None:
        if self._rounds.get(debate) is opened:
            del self._rounds[debate]
        opened.span.end()
        # back to the debate: set, not reset, so it holds whichever task ends the round
        otel.attach(opened.before)

    # -- events and calls ----------------------------------------------------------------------
    def event(self, name: str, data: Mapping[str, object], words: frozenset[str]) -> None:
        """A run event on the span current where it happened, or, when that span has
        ended (an observer's check finishing after its round), on the nearest one that
        has not: its debate's run, the phase, the session."""
        ctx = otel.get_current()
        span = trace.get_current_span(ctx)
        if not span.is_recording():  # mostly it is: the rest looked at only then
            debate = ctx.get(_RUN)
            run = self._running.get(debate) if isinstance(debate, str) else None
            candidates = (run, self._phase, self._top_span)
            still = next((s for s in candidates if s is not None and s.is_recording()), None)
            if still is None:
                return
            span = still
        span.add_event(name, genai.event_attributes(data, words, content=self.content))

    def call(self, call: genai.Call) -> None:
        """A model call's span, made when the call has ended (a call refused for a
        budget was never made, and gets none). A call for a debate whose run this
        context is not in (judging its stubs, merging its branches, integrating it) is
        that debate's work all the same: it gets a debate span of its own, for the
        call's time, linked to the debate's run."""
        ctx = otel.get_current()
        outside = bool(call.debate) and ctx.get(_RUN) != call.debate
        links = work_for(self.runs.get(call.debate)) if outside else []
        attrs = genai.attributes(call, content=self.content)
        wrapper: Span | None = None
        if outside:
            wrapper = self.tracer.start_span(
                f"debate {call.phase}", context=ctx, start_time=call.start_ns,
                attributes=debate_attributes(call), links=links,
            )  # fmt: skip
            ctx = trace.set_span_in_context(wrapper, ctx)
        span = self.tracer.start_span(
            genai.name(call), context=ctx, kind=SpanKind.CLIENT, start_time=call.start_ns, attributes=attrs
        )
        if call.error:
            span.set_status(Status(StatusCode.ERROR, call.error))
        span.end(end_time=call.end_ns)
        if wrapper is not None:
            wrapper.end(end_time=call.end_ns)


def _failed(span: Span, exc: BaseException) -> None:
    """How a span's work ended when it did not end well: the kind of error only (its
    message may quote a reply)."""
    span.set_attribute("error.type", type(exc).__name__)
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
