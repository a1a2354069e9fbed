"""Rich live progress for `dagmca run`."""

from __future__ import annotations

import time
from collections import Counter
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
        self._live = Live(console=console, refresh_per_second=4, transient=True, get_renderable=self.render)

    def __enter__(self) -> LiveProgress:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def emit(self, event: str, **data: Any) -> None:
        self.counts[event] += 1
        if event == "phase":
            self.phase = str(data["phase"])
        elif event == "round":
            self.where = f"{data['debate'].split('/', 1)[-1]} round {data['number']}"
        elif event == "debate_done" and data.get("origin") != "main":
            self.counts["branch_done"] += 1
        elif event == "branches":
            self.counts["branches_selected"] += int(data["count"])

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
        return Group(Text("dagmca run", style="bold"), grid)
