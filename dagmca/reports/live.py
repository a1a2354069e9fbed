"""Live status of a running session: `status.json`, rewritten atomically as the run
goes, and `events.jsonl`, one line per event, appended. Both sit in the session's
report folder, so `dagmca status` (or `tail -f`) can follow a run from another process."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from dagmca.debate.events import (
    BranchesSelected,
    BranchStarted,
    DebateDone,
    Event,
    EventSink,
    PhaseChanged,
    RoundStarted,
    SynthesisWritten,
    TurnRecorded,
)
from dagmca.debate.state import SessionState
from dagmca.graph import DebateStatus, utcnow
from dagmca.reports.writers import write_json

# status.json is rewritten (and events.jsonl flushed) at most this often, and at every
# phase change and debate end
MIN_INTERVAL_S = 0.25
ALWAYS = (PhaseChanged, DebateDone, BranchesSelected, SynthesisWritten)


class LiveStatus:
    """An `EventSink` in front of another (the CLI's progress): it records every event,
    keeps the live picture, and hands the event on."""

    def __init__(self, state: SessionState, out_dir: Path, inner: EventSink) -> None:
        self.state = state
        self.out_dir = out_dir
        self.inner = inner
        self.started = time.monotonic()
        self.debates: dict[str, dict[str, Any]] = {}
        self.agents: dict[str, dict[str, Any]] = {}
        self.last_event: dict[str, Any] = {}
        self.events = 0
        self._written = 0.0
        out_dir.mkdir(parents=True, exist_ok=True)
        self._log: IO[str] | None = (out_dir / "events.jsonl").open("a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        self.events += 1
        elapsed = round(time.monotonic() - self.started, 3)
        line = {"event": event.name, "at": utcnow(), "elapsed_s": elapsed, **event.data()}
        if self._log is not None:
            self._log.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self._follow(event)
        self.last_event = line
        now = time.monotonic()
        if isinstance(event, ALWAYS) or now - self._written >= MIN_INTERVAL_S:
            self.write()
        self.inner.emit(event)

    def _follow(self, event: Event) -> None:
        if isinstance(event, BranchStarted | RoundStarted | TurnRecorded):
            d = self.debates.setdefault(event.debate, {"state": DebateStatus.RUNNING, "round": 0, "turns": 0})
            if isinstance(event, RoundStarted):
                d["round"] = event.number
            elif isinstance(event, TurnRecorded):
                d["turns"] += 1
                self.agents[f"{event.debate}/{event.agent}"] = {
                    "debate": event.debate,
                    "agent": event.agent,
                    "last_phase": event.phase,
                    "round": d["round"],
                }
        elif isinstance(event, DebateDone):
            self.debates.setdefault(event.debate, {"round": 0, "turns": 0})["state"] = DebateStatus.DONE

    def snapshot(self) -> dict[str, Any]:
        m = self.state.handles.llm.meter
        session = self.state.graph.session
        return {
            "session": self.state.handles.session_id,
            "status": session.status if session else "starting",
            "phase": self.state.phase,
            "started_at": session.started_at if session else None,
            "updated_at": utcnow(),
            "elapsed_s": round(time.monotonic() - self.started, 2),
            "active_debates": {
                k: v for k, v in self.debates.items() if v.get("state") is DebateStatus.RUNNING
            },
            "debates_done": sum(1 for v in self.debates.values() if v.get("state") is DebateStatus.DONE),
            "agents": self.agents,
            # how the passage goes into prompts: whole, or the long-passage path
            "passage": {
                "mode": self.state.prompts.passage_mode,
                "tokens": self.state.prompts.passage_tokens,
                "sections": len(self.state.prompts.sections),
            },
            "llm_calls": m.calls,
            "cache_hits": m.cache_hits,
            "llm_failures": m.failures,
            "tokens": m.usage.total,
            "cost_usd": round(m.cost_usd, 6),
            # which model plays each role, and what each role's calls made and cost so far
            "roles": [
                {
                    "role": r.role,
                    "model": r.model,
                    "calls": r.calls,
                    "cache_hits": r.cache_hits,
                    "failures": r.failures,
                    "tokens": r.usage.total,
                    "cost_usd": round(r.cost_usd, 6),
                }
                for r in m.roles()
            ],
            "events": self.events,
            "last_event": self.last_event,
        }

    def write(self) -> None:
        # events.jsonl reaches the disk with status.json: a flush per event was 4% of
        # the event loop's time on a session of thousands of calls
        if self._log is not None:
            self._log.flush()
        # on one line: rewritten hundreds of times a run, for a program to read (and
        # `dagmca status` to show); indented, it was 1.5% of the event loop's time
        write_json(self.out_dir / "status.json", self.snapshot(), indent=None)
        self._written = time.monotonic()

    def close(self) -> None:
        self.write()
        if self._log is not None:
            self._log.close()
            self._log = None
