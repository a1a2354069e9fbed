"""The swarm from Python: `swarm(tasks, ...)`, what `dagmca swarm` runs, synchronously,
on a workspace opened and closed around it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from dagmca.api.sync import blocking
from dagmca.api.workspace import Workspace
from dagmca.config.overrides import OpenOverrides
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore
from dagmca.swarm.loop import OnAttempt
from dagmca.swarm.options import SwarmOptions
from dagmca.swarm.report import SwarmReport
from dagmca.workspace import ClientLike, SettingsLike


def swarm(
    tasks: str | Path,
    *,
    store: str | Path | GraphStore | None = None,
    options: SwarmOptions | Mapping[str, Any] | None = None,
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    embedder: Embedder | None = None,
    on_attempt: OnAttempt | None = None,
    **overrides: Unpack[OpenOverrides],
) -> SwarmReport:
    """Run (or finish, or read back) the swarm of the stream `tasks` in `store`: the same
    as `Workspace(store).swarm(...)`, opened and closed around it. `options`: a
    `SwarmOptions` (or a mapping of its fields: `{"router": "greedy"}`); keyword
    `overrides` are settings."""

    async def main() -> SwarmReport:
        async with Workspace(store, embedder=embedder) as ws:
            return await ws.swarm(
                tasks, options=options, settings=settings, client=client, on_attempt=on_attempt, **overrides
            )

    return blocking(main())
