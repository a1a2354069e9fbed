"""The judged decisions of a run, for its summary: the live progress shows each verdict
as it comes and is gone when the run ends, so the summary lists them again, each with
its verdict, method, cosine and reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagmca.debate.events import DuplicateChecked, Event, EventSink, PairJudged, StubChecked
from dagmca.text import local_id, one_line

if TYPE_CHECKING:
    from dagmca.llm.metered import Meter

SHOWN = 10  # a long session judges many times: the summary lists the first, counts the rest


class Verdicts:
    """Keeps the run's judged decisions, and passes every event on to `inner` (the live
    progress, or nothing with --quiet)."""

    def __init__(self, inner: EventSink | None = None) -> None:
        self.inner = inner
        self.lines: list[str] = []

    # the live view's start and stop, when there is one (the session reads the meter through them)
    def start(self, meter: Meter) -> None:
        start = getattr(self.inner, "start", None)
        if callable(start):
            start(meter)

    def stop(self) -> None:
        stop = getattr(self.inner, "stop", None)
        if callable(stop):
            stop()

    def emit(self, event: Event) -> None:
        if self.inner is not None:
            self.inner.emit(event)
        line = decision_line(event)
        if line is not None:
            self.lines.append(line)

    def text(self) -> str:
        if not self.lines:
            return (
                "none this run: nothing reached the judge (no two alike sibling branches, no open stub "
                "near a new text, no two alike questions)"
            )
        more = len(self.lines) - SHOWN
        rest = [f"… and {more} more (events.jsonl in the reports)"] if more > 0 else []
        return "\n".join([f"{len(self.lines)} judged:", *self.lines[:SHOWN], *rest])


def decision_line(event: Event) -> str | None:
    """One judged decision as a line: what was judged, the verdict, how, and why. Stub
    checks left open without a verdict (below the prefilter, past --max-stub-checks)
    are not decisions."""
    match event:
        case PairJudged():
            what = f"branches {local_id(event.source)} / {local_id(event.target)}"
            verdict = event.verdict
        case DuplicateChecked():
            what = f"same question? {one_line(event.question, 60)!r} / {one_line(event.twin_question, 60)!r}"
            # a duplicate whose twin left the open stubs first is not merged: its reason says so
            verdict = event.verdict or ("duplicate" if event.merged else "not merged")
            verdict += ", merged" if event.merged else ""
        case StubChecked() if event.method == "llm" or event.outcome != "open":
            what = f"stub {one_line(event.question, 60)!r} after {local_id(event.after)}"
            verdict = event.outcome
        case _:
            return None
    return (
        f"- {what}: {verdict} ({event.method}, cosine {event.similarity:.2f}): {one_line(event.reason, 160)}"
    )
