"""The swarm from Python: `swarm(tasks, ...)`, what `dagmca swarm` runs, synchronously,
on a workspace opened and closed around it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from dagmca.api.sync import blocking
from dagmca.api.workspace import Workspace
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore
from dagmca.swarm.agents import ContextOptions
from dagmca.swarm.loop import OnAttempt
from dagmca.swarm.report import SwarmReport
from dagmca.swarm.routers import parse_routers
from dagmca.swarm.running import plan_for, swarm_in
from dagmca.swarm.tasks import load_stream
from dagmca.workspace import ClientLike, SettingsLike, settings_from


def swarm(
    tasks: str | Path,
    *,
    store: str | Path | GraphStore | None = None,
    router: str = "affinity",
    agents: int = 4,
    repeats: int = 1,
    snapshot_every: int = 20,
    context: ContextOptions | None = None,
    temperature: float = 0.05,
    memory: Literal["none", "store"] = "none",
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    embedder: Embedder | None = None,
    on_attempt: OnAttempt | None = None,
    unsafe_executor: bool = False,
) -> SwarmReport:
    """Run (or finish, or read back) the swarm of the stream `tasks` in `store`, with
    `router` (a name or a comma list), and compare its routers. `memory="store"` starts
    every run's router from the personas' records (see `dagmca swarm --memory`). Bad
    input raises a UserError before any call; code tasks where no namespace can be made
    raise ExecutorUnavailable unless `unsafe_executor` (see `dagmca swarm --unsafe-executor`)."""
    path = Path(tasks)
    found = load_stream(path)
    cfg = settings_from(settings)
    plan = plan_for(
        found,
        path.read_text(encoding="utf-8"),
        cfg,
        agents=agents,
        routers=parse_routers(router),
        repeats=repeats,
        snapshot_every=snapshot_every,
        context=context,
        temperature=temperature,
        memory=memory,
    )

    async def main() -> SwarmReport:
        async with Workspace(store, embedder=embedder) as ws:
            return await swarm_in(ws, plan, cfg, client, on_attempt, unsafe_executor=unsafe_executor)

    return blocking(main())
