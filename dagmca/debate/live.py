"""Live status of a running session: `status.json`, rewritten atomically as the run
goes, and `events.jsonl`, one line per event, appended. Both sit in the session's
report folder, so `dagmca status` (or `tail -f`) can follow a run from another process."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from dagmca.debate.reports import write_json
from dagmca.debate.state import Events, SessionState
from dagmca.models import SessionNode, utcnow

# status.json is rewritten at most this often, and at every phase change and debate end
MIN_INTERVAL_S = 0.25
ALWAYS = {"phase", "debate_done", "branches", "synthesis", "final"}


class LiveStatus:
    """An `Events` sink in front of another (the CLI's progress): it records every
    event, keeps the live picture, and hands the event on."""

    def __init__(self, state: SessionState, session: SessionNode, out_dir: Path, inner: Events) -> None:
        self.state = state
        self.session = session
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

    def emit(self, event: str, **data: Any) -> None:
        self.events += 1
        elapsed = round(time.monotonic() - self.started, 3)
        line = {"event": event, "at": utcnow(), "elapsed_s": elapsed, **data}
        if self._log is not None:
            self._log.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
            self._log.flush()
        self._follow(event, data)
        self.last_event = line
        now = time.monotonic()
        if event in ALWAYS or now - self._written >= MIN_INTERVAL_S:
            self.write()
        self.inner.emit(event, **data)

    def _follow(self, event: str, data: dict[str, Any]) -> None:
        debate = data.get("debate")
        if event in ("branch_start", "round", "turn") and debate:
            d = self.debates.setdefault(debate, {"state": "running", "round": 0, "turns": 0})
            if event == "round":
                d["round"] = data.get("number", d["round"])
            if event == "turn":
                d["turns"] += 1
                self.agents[f"{debate}/{data.get('agent')}"] = {
                    "debate": debate,
                    "agent": data.get("agent"),
                    "last_phase": data.get("phase"),
                    "round": d["round"],
                }
        elif event == "debate_done" and debate:
            self.debates.setdefault(debate, {"round": 0, "turns": 0})["state"] = "done"

    def snapshot(self) -> dict[str, Any]:
        m = self.state.llm.meter
        return {
            "session": self.state.session_id,
            "status": self.session.status,
            "phase": self.state.phase,
            "started_at": self.session.started_at,
            "updated_at": utcnow(),
            "elapsed_s": round(time.monotonic() - self.started, 2),
            "active_debates": {k: v for k, v in self.debates.items() if v.get("state") == "running"},
            "debates_done": sum(1 for v in self.debates.values() if v.get("state") == "done"),
            "agents": self.agents,
            "llm_calls": m.calls,
            "cache_hits": m.cache_hits,
            "llm_failures": m.failures,
            "tokens": m.usage.total,
            "cost_usd": round(m.cost_usd, 6),
            "events": self.events,
            "last_event": self.last_event,
        }

    def write(self) -> None:
        write_json(self.out_dir / "status.json", self.snapshot())
        self._written = time.monotonic()

    def close(self) -> None:
        self.write()
        if self._log is not None:
            self._log.close()
            self._log = None
