"""The progress of `dagmca run`, fed by the session's events: a small live panel on a
terminal, lines where stderr is a file or a pipe."""

from __future__ import annotations

import time
from collections import Counter, deque
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from dagmca.cli.console import plain
from dagmca.debate.events import (
    BranchesSelected,
    BranchRouted,
    BranchStarted,
    CallFailed,
    DebateDone,
    DuplicateChecked,
    Event,
    EventSink,
    PairJudged,
    PassageSectioned,
    PeerStep,
    PhaseChanged,
    RoundStarted,
    StubChecked,
    SynthesisWritten,
    TensionFlagged,
    TurnRecorded,
)
from dagmca.graph import DebateStatus, PassageStatus
from dagmca.llm.metered import Meter
from dagmca.text import local_id, one_line

if TYPE_CHECKING:
    from dagmca.corpus.build import Build


class LiveProgress:
    """Receives session events; renders the panel from them and from the LLM meter."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.counts: Counter[str] = Counter()
        self.phase = "starting"
        self.where = ""
        self.started = time.monotonic()
        self.meter: Meter | None = None
        self.log: deque[str] = deque(maxlen=10)  # the latest decisions, newest last
        self.branch_rounds: dict[str, str] = {}  # branch -> "round 2", or its status once done
        self._live = Live(console=console, refresh_per_second=4, transient=True, get_renderable=self.render)

    def start(self, meter: Meter) -> None:
        self.meter = meter
        self._live.start()

    def stop(self) -> None:
        self._live.stop()

    def emit(self, event: Event) -> None:
        self.counts[event.name] += 1
        match event:
            case PhaseChanged(phase=phase):
                self.phase = phase
            case RoundStarted(debate=debate, number=number):
                self.where = f"{local_id(debate)} round {number}"
                if local_id(debate) != "main":
                    self.branch_rounds[local_id(debate)] = f"round {number}"
            case DebateDone(debate=debate, origin=origin) if origin != "main":
                self.counts["branch_done"] += 1
                self.branch_rounds[local_id(debate)] = DebateStatus.DONE
            case TensionFlagged():
                self._note(
                    f"{local_id(event.debate)}: {event.observer} flags ({event.urgency:.2f}) "
                    f"{one_line(event.question, 70)}"
                )
            case BranchesSelected():
                self.counts["branches_selected"] += event.count
                chosen = ", ".join(f"{one_line(q, 40)} ({u:.2f})" for q, u in event.selected)
                self._note(f"{local_id(event.debate)}: selected {chosen}; {len(event.stubbed)} kept as stubs")
            case SynthesisWritten():
                self._note(
                    f"merge of {event.members} branches ({event.method}): {one_line(event.reason, 120)}"
                )
            case PairJudged():
                self._note(
                    f"{local_id(event.source)} / {local_id(event.target)}: {event.verdict} ({event.method}, "
                    f"cosine {event.similarity:.2f}) {one_line(event.reason, 90)}"
                )
            case StubChecked() if event.outcome != "open" or event.method == "llm":
                self._note(
                    f"stub {one_line(event.question, 50)}: {event.outcome} ({event.method}, "
                    f"cosine {event.similarity:.2f}) {one_line(event.reason, 80)}"
                )
            case DuplicateChecked() if event.merged:
                self._note(
                    f"stub {one_line(event.question, 50)}: duplicate of {one_line(event.twin_question, 50)} "
                    f"({event.method}, cosine {event.similarity:.2f}) {one_line(event.reason, 60)}"
                )
            case CallFailed():
                self._note(f"call failed ({event.agent}): {one_line(event.error, 80)}")
            case PeerStep() if event.kind in ("restart", "timeout", "winner"):
                step = f"{event.kind} {event.agent} {event.label or ''} {event.detail}".rstrip()
                self._note(f"{local_id(event.debate)}: {step}")
            case PassageSectioned():
                self._note(
                    f"the passage ({event.tokens:,} tokens) is longer than its share of a prompt "
                    f"({event.share:,}): {event.sections} sections, mapped for the main debate, "
                    "retrieved for each branch"
                )
            case BranchRouted():
                self._note(f"{local_id(event.debate)}: {event.category} staffed by {', '.join(event.staff)}")

    def _note(self, line: str) -> None:
        self.log.append(line)

    def render(self) -> Group:
        m = self.meter
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan")
        grid.add_column()
        grid.add_row("phase", f"{self.phase}  {self.where}")
        grid.add_row("turns", str(self.counts[TurnRecorded.name]))
        grid.add_row("tensions flagged", str(self.counts[TensionFlagged.name]))
        grid.add_row(
            "branches",
            f"{self.counts[BranchStarted.name]} started, {self.counts['branch_done']} done"
            f", {self.counts[SynthesisWritten.name]} syntheses",
        )
        if m is not None:
            grid.add_row("LLM calls", f"{m.calls} ({m.failures} failed)")
            grid.add_row("tokens", f"{m.usage.total:,}")
            grid.add_row("cost", f"${m.cost_usd:.4f}")
        grid.add_row("elapsed", f"{time.monotonic() - self.started:.0f}s")
        if self.branch_rounds:
            recent = list(self.branch_rounds.items())[-6:]
            grid.add_row("branch progress", "  ".join(f"{b}: {r}" for b, r in recent))
        log = Text("\n".join(self.log), style="dim", overflow="ellipsis", no_wrap=True)
        return Group(Text("dagmca run", style="bold"), grid, log)


class LineProgress(LiveProgress):
    """The progress of a run whose stderr is no terminal (`2>log`, a CI job): a line at
    each phase and at most every `EVERY_S` seconds between, as `eval` writes its own."""

    EVERY_S = 5.0

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self._said = 0.0
        self._phase_said = self._last = ""

    def start(self, meter: Meter) -> None:
        self.meter = meter
        self._say()

    def stop(self) -> None:
        self._say()

    def emit(self, event: Event) -> None:
        if isinstance(event, PhaseChanged):  # a round of the last phase is not where this one is
            self.where = ""
        super().emit(event)
        if self.phase != self._phase_said or time.monotonic() - self._said >= self.EVERY_S:
            self._say()

    def line(self) -> str:
        m = self.meter
        spend = (
            f"{m.calls} calls ({m.failures} failed), {m.usage.total:,} tokens, ${m.cost_usd:.4f}" if m else ""
        )
        branches, where = self.counts[BranchStarted.name], f", {self.where}" if self.where else ""
        return (
            f"[{time.monotonic() - self.started:.0f}s] {self.phase}{where}: "
            f"{self.counts[TurnRecorded.name]} turns, {self.counts[TensionFlagged.name]} tensions, "
            f"{branches} branches ({self.counts['branch_done']} done); {spend}"
        )

    def _say(self) -> None:
        line = self.line()
        said = line.partition("] ")[2]  # the same but for the time: nothing new to say
        if said == self._last:
            return
        self._said, self._phase_said, self._last = time.monotonic(), self.phase, said
        plain(self.console, f"dagmca: {line}")


def progress(console: Console) -> LiveProgress:
    """The live panel on a terminal, else lines (a panel redrawn into a file is noise)."""
    return LiveProgress(console) if console.is_terminal else LineProgress(console)


class Noted:
    """A session's events passed on to `inner` (the live view, or nothing with --quiet),
    with `note` printed on `console` when the session opens: after the workspace took
    what it was told, so that a refused value is the only line."""

    def __init__(self, console: Console, note: str | None, inner: EventSink | None) -> None:
        self.console, self.note, self.inner = console, note, inner

    def start(self, meter: Meter) -> None:
        if self.note:
            plain(self.console, f"dagmca: note: {self.note}")
            self.note = None
        if callable(start := getattr(self.inner, "start", None)):
            start(meter)

    def stop(self) -> None:
        if callable(stop := getattr(self.inner, "stop", None)):
            stop()

    def emit(self, event: Event) -> None:
        if self.inner is not None:
            self.inner.emit(event)


class BuildProgress:
    """The live view of a build: passages done, running and left; calls, tokens and
    cost over every session; the rate limiter's current rate; an ETA; and what each
    running passage is doing."""

    def __init__(self, console: Console, job: Build) -> None:
        self.job = job
        self.started = time.monotonic()
        self._live = Live(console=console, refresh_per_second=2, transient=True, get_renderable=self.render)

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        self._live.stop()

    def render(self) -> Group:
        job = self.job
        states = Counter(o.status for o in job.outcomes.values())
        totals = job.totals()
        done = sum(n for s, n in states.items() if s.finished())
        active = sum(n for s, n in states.items() if s.active())
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan")
        grid.add_column()
        grid.add_row(
            "passages",
            f"{done} done, {active} running, {states[PassageStatus.WAITING]} left"
            + "".join(f", {states[k]} {k}" for k in PassageStatus if k.unfinished() and states[k]),
        )
        grid.add_row("LLM calls", f"{totals['calls']} ({totals['cache_hits']} from the cache)")
        grid.add_row("tokens", f"{totals['tokens']:,}")
        grid.add_row("cost", f"${totals['cost_usd']:.4f}")
        limiter = job.limiter
        if limiter is not None and limiter.limited:
            rate = f"{limiter.rate:.0f}/min aimed at" if limiter.rate else "unlimited"
            grid.add_row("rate", f"{limiter.per_minute()} requests in the last minute; {rate}; "
                         f"{limiter.throttled} rate-limited replies")  # fmt: skip
        eta = job.eta_s()
        grid.add_row(
            "elapsed", f"{time.monotonic() - self.started:.0f}s" + (f", about {eta:.0f}s left" if eta else "")
        )
        lines = [
            f"{o.passage.id}: {o.status} {o.phase} ({o.turns} turns)"
            for o in job.outcomes.values()
            if o.status.active()
        ]
        log = Text("\n".join(lines[-8:]), style="dim", overflow="ellipsis", no_wrap=True)
        return Group(Text("dagmca build", style="bold"), grid, log)
