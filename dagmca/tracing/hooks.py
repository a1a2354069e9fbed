"""The hooks the rest of dagmca calls, and their no-op path.

Untraced (the default), each hook reads one context variable, finds nothing and
returns: no span is made, and opentelemetry is never imported. A traced session (or
build) sets the variable for the work it runs, tasks included, since asyncio copies
the context into every task it creates."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from dagmca.tracing import setup
from dagmca.tracing.genai import AttrValue, Call

if TYPE_CHECKING:
    from dagmca.tracing.spans import Round, Tracing

_active: ContextVar[Tracing | None] = ContextVar("dagmca_tracing", default=None)


def active() -> bool:
    """Whether this context is traced (callers skip building what a span would carry)."""
    return _active.get() is not None


@contextmanager
def session(
    session_id: str, *, otel: bool, content: bool, attributes: Mapping[str, AttrValue]
) -> Iterator[None]:
    """The span of one session's run around the block: traced when `otel` is set or an
    OTLP endpoint variable is, or when the session runs inside a traced build."""
    own = {"dagmca.session": session_id, **attributes}
    with _top("session", f"session {session_id}", otel, content, own):
        yield


@contextmanager
def group(kind: str, *, otel: bool, content: bool, attributes: Mapping[str, AttrValue]) -> Iterator[None]:
    """The span of a build (or an evaluation) around the block: the sessions it runs
    are its children, one trace for all of them."""
    with _top(kind, kind, otel, content, attributes):
        yield


@contextmanager
def _top(
    kind: str, name: str, otel: bool, content: bool, attributes: Mapping[str, AttrValue]
) -> Iterator[None]:
    outer = _active.get()
    if outer is None and not setup.wanted(otel):
        yield
        return
    setup.require(otel)
    from dagmca.tracing.spans import Tracing

    tracer = outer.tracer if outer is not None else setup.tracer()
    tracing = Tracing(tracer, content=content or (outer is not None and outer.content))
    token = _active.set(tracing)
    try:
        with tracing.top(name, kind, attributes):
            yield
    finally:
        _active.reset(token)


def trace_id() -> str | None:
    """The id of the trace this context is in, as OpenTelemetry writes it (None:
    untraced)."""
    tracing = _active.get()
    return tracing.trace_id() if tracing is not None else None


def phase(name: str) -> None:
    tracing = _active.get()
    if tracing is not None:
        tracing.phase(name)


@contextmanager
def debate(debate_id: str, *, origin: str, depth: int, parent: str | None = None) -> Iterator[None]:
    """The span of a debate's run around the block; `parent`: the debate it branches from."""
    tracing = _active.get()
    if tracing is None:
        yield
        return
    with tracing.debate(debate_id, origin=origin, depth=depth, parent=parent):
        yield


def round_start(debate_id: str, number: int) -> Round | None:
    tracing = _active.get()
    return tracing.round_start(debate_id, number) if tracing is not None else None


def round_end(debate_id: str, opened: Round | None) -> None:
    tracing = _active.get()
    if tracing is not None and opened is not None:
        tracing.round_end(debate_id, opened)


# run events a span already says: a turn's event would repeat its call span (the agent,
# the debate, the phase), once per turn of a run
REPEATS = frozenset({"turn"})


def event(name: str, data: Callable[[], Mapping[str, object]], words: frozenset[str]) -> None:
    """A run event on the current span; `data` is only called when traced."""
    tracing = _active.get()
    if tracing is not None and name not in REPEATS:
        tracing.event(name, data(), words)


def call(made: Call) -> None:
    """A model call's span, made now that the call has ended."""
    tracing = _active.get()
    if tracing is not None:
        tracing.call(made)
