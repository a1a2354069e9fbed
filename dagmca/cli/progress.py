"""Rich live progress for `dagmca run`."""

from __future__ import annotations

import time
from collections import Counter, deque
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from dagmca.llm.metered import Meter


class LiveProgress:
    """Receives session events and LLM call events; renders a small live panel."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.counts: Counter[str] = Counter()
        self.phase = "starting"
        self.where = ""
        self.started = time.monotonic()
        self.meter: Meter | None = None
        self.log: deque[str] = deque(maxlen=10)  # the latest decisions, newest last
        self.branch_rounds: dict[str, str] = {}  # branch -> "round 2" / "done"
        self._live = Live(console=console, refresh_per_second=4, transient=True, get_renderable=self.render)

    def __enter__(self) -> LiveProgress:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def emit(self, event: str, **data: Any) -> None:
        self.counts[event] += 1
        short = str(data.get("debate", "")).split("/", 1)[-1]
        if event == "phase":
            self.phase = str(data["phase"])
        elif event == "round":
            self.where = f"{short} round {data['number']}"
            if short != "main":
                self.branch_rounds[short] = f"round {data['number']}"
        elif event == "debate_done" and data.get("origin") != "main":
            self.counts["branch_done"] += 1
            self.branch_rounds[short] = "done"
        elif event == "tension":
            self._note(
                f"{short}: {data.get('observer')} flags ({data['urgency']:.2f}) {_clip(data.get('question'))}"
            )
        elif event == "branches":
            self.counts["branches_selected"] += int(data["count"])
            chosen = ", ".join(f"{_clip(q, 40)} ({u:.2f})" for q, u in data.get("selected", []))
            self._note(f"{short}: selected {chosen}; {len(data.get('stubbed', []))} kept as stubs")
        elif event == "synthesis":
            self._note(
                f"merge of {data['members']} branches, similarity {data['similarity']:.2f}: {data['reason']}"
            )
        elif event == "relation":
            self._note(
                f"{data['source'].split('/', 1)[-1]} {data['type']} {data['target'].split('/', 1)[-1]}"
            )
        elif event == "revisit_check" and data.get("outcome") != "open":
            self._note(
                f"stub {_clip(data.get('question'), 50)}: {data['outcome']} ({data['similarity']:.2f})"
            )
        elif event == "call_failed":
            self._note(f"call failed ({data.get('agent')}): {_clip(data.get('error'), 80)}")
        elif event == "peer" and data.get("kind") in ("restart", "timeout", "winner"):
            label = data.get("label") or ""
            self._note(
                f"{short}: {data['kind']} {data.get('agent')} {label} {data.get('detail', '')}".rstrip()
            )
        elif event == "route":
            self._note(f"{short}: {data.get('category')} staffed by {', '.join(data.get('staff', []))}")

    def _note(self, line: str) -> None:
        self.log.append(line)

    def render(self) -> Group:
        m = self.meter
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan")
        grid.add_column()
        grid.add_row("phase", f"{self.phase}  {self.where}")
        grid.add_row("turns", str(self.counts["turn"]))
        grid.add_row("tensions flagged", str(self.counts["tension"]))
        grid.add_row(
            "branches",
            f"{self.counts['branch_start']} started, {self.counts['branch_done']} done"
            f", {self.counts['synthesis']} syntheses",
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


def _clip(value: object, limit: int = 70) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
