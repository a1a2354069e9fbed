"""What tracing's own code costs inside a traced run: a wrapper that runs dagmca with the
CPU time of each of its tracing parts accounted (scripts/bench_scale.py --otel-parts).

    python scripts/otel_parts.py OUT.json dagmca-arguments...

Each part is timed with the CPU clock of the thread it runs on (`time.thread_time`), so
the figure is the part's own work whatever else the machine does: far steadier than the
difference of two whole runs, each of which varies by more than tracing costs. Parts:
`setup` (importing the SDK and the exporter, making the provider), `hooks` (what a
traced run does on its event loop for spans, events and calls, from building a call's
record and gathering an event's fields on), `export` (the SDK's exporter encoding and
posting the batches, on the batch processor's thread) and `flush` (the last batch, sent as the process
leaves); a part inside another (a flush's export) is counted once, in the outer one.
What this does not see: the interpreter switching between the exporter's thread and the
others; the paired whole runs (scripts/bench_otel.py) hold that. The wrappers add a
little to a traced run's own time, so they overstate tracing slightly, never the other
way."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

parts = {"setup": 0.0, "hooks": 0.0, "export": 0.0, "flush": 0.0}
counts = {"exports": 0, "sdk_spans": 0}  # sdk_spans: those the processor batched
by_hook: dict[str, float] = {}  # the hooks' part, by hook
_lock = threading.Lock()


def _add(part: str, seconds: float) -> None:
    with _lock:  # the exporter's thread adds too
        hook = part.removeprefix("hooks.")
        if hook != part:
            by_hook[hook] = by_hook.get(hook, 0.0) + seconds
            counts[hook] = counts.get(hook, 0) + 1
            part = "hooks"
        parts[part] += seconds


_inside = threading.local()
gc_s = {"in_parts": 0.0, "all": 0.0}
_gc_started = [0.0]


def _gc(phase: str, info: dict[str, int]) -> None:
    """The collector's time, and how much of it fell inside a timed part: a collection
    runs where an allocation trips it, whoever's objects fill the heap."""
    if phase == "start":
        _gc_started[0] = time.thread_time()
        return
    spent = time.thread_time() - _gc_started[0]
    gc_s["all"] += spent
    if getattr(_inside, "part", False):
        gc_s["in_parts"] += spent


def timed(part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        outer = getattr(_inside, "part", False)
        _inside.part = True
        try:
            return fn(*args, **kwargs)
        finally:
            _inside.part = outer
            if not outer:  # inside another part (a flush's export): counted there once
                _add(part, time.thread_time() - started)

    return wrapper


def timed_context(part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A context manager's entering and leaving timed, not the block between."""

    @contextlib.contextmanager
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        started = time.thread_time()
        manager = fn(*args, **kwargs)
        value = manager.__enter__()
        _add(part, time.thread_time() - started)
        try:
            yield value
        except BaseException:
            started = time.thread_time()
            suppressed = manager.__exit__(*sys.exc_info())
            _add(part, time.thread_time() - started)
            if not suppressed:
                raise
        else:
            started = time.thread_time()
            manager.__exit__(None, None, None)
            _add(part, time.thread_time() - started)

    return wrapper


def install() -> None:
    import dagmca.tracing
    from dagmca.tracing import setup, spans
    from dagmca.tracing.spans import Tracing

    setup.tracer = timed("setup", setup.tracer)
    # it imports the exporter, to check it is there; called through the package too
    setup.require = dagmca.tracing.require = timed("setup", setup.require)
    dagmca.tracing.flush = timed("flush", dagmca.tracing.flush)  # as the CLI calls it
    for name in ("call", "round_start", "round_end", "phase", "trace_id"):
        setattr(Tracing, name, timed(f"hooks.{name}", getattr(Tracing, name)))
    # a run event's fields are gathered only when traced: its hook is timed from there
    dagmca.tracing.event = timed("hooks.event", dagmca.tracing.event)
    from dagmca.llm.stack.traced import Traced

    Traced._call = timed("hooks.made", Traced._call)  # type: ignore[method-assign]  # the Call, built when traced
    for name in ("top", "debate"):
        setattr(Tracing, name, timed_context(f"hooks.{name}", getattr(Tracing, name)))

    from dagmca.tracing import otlp

    export = otlp.Sending.export

    def exported(self: Any, batch: Any) -> Any:
        counts["exports"] += 1
        counts["sdk_spans"] += len(batch)
        return export(self, batch)

    otlp.Sending.export = timed("export", exported)  # type: ignore[method-assign]
    del spans


def main() -> None:
    out = sys.argv.pop(1)
    import dagmca.tracing  # an untraced run imports it too

    started = time.process_time()
    import dagmca.tracing.spans  # noqa: F401  (the OpenTelemetry API, which only a traced run imports)

    _add("setup", time.process_time() - started)
    install()
    import gc

    gc.callbacks.append(_gc)
    leave = os._exit

    def write_then_leave(code: int) -> None:
        with open(out, "w") as f:
            json.dump({"parts_s": parts, "counts": counts, "hooks_s": by_hook, "gc_s": gc_s}, f)
        leave(code)

    os._exit = write_then_leave  # type: ignore[assignment]
    sys.argv[0] = "dagmca"
    from dagmca.cli.app import entry

    entry()


if __name__ == "__main__":
    main()
