"""`dagmca.run`: one session from a script, without writing async code."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dagmca import aio
from dagmca.api.backends import ClientLike
from dagmca.api.results import RunResult
from dagmca.api.workspace import SettingsLike, Workspace
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore


def run(
    passage: str,
    *,
    store: str | Path | GraphStore | None = None,
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    session: str | None = None,
    title: str | None = None,
    embedder: Embedder | None = None,
    reports: str | Path | None = None,
    **overrides: Any,
) -> RunResult:
    """Debate `passage` as a new session in `store` and return its result: the same as
    `Workspace(store).run(...)`, opened and closed around it. Keyword `overrides` are
    settings (`llm="fake"`, `rounds=1`, ...).

    Works where an event loop is already running (Jupyter): the session then runs on a
    loop of its own in a worker thread, and this call waits for it."""

    async def main() -> RunResult:
        async with Workspace(store, embedder=embedder, reports=reports) as ws:
            return await ws.run(
                passage, settings=settings, client=client, session=session, title=title, **overrides
            )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return aio.run(main())
    with ThreadPoolExecutor(1, thread_name_prefix="dagmca-run") as pool:
        return pool.submit(aio.run, main()).result()
