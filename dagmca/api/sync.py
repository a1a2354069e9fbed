"""`dagmca.run`: one session from a script, without writing async code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from dagmca import aio
from dagmca.api.backends import ClientLike
from dagmca.api.results import RunResult
from dagmca.api.workspace import SettingsLike, Workspace
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore

T = TypeVar("T")


def run(
    passage: str | None = None,
    *,
    question: str | None = None,
    store: str | Path | GraphStore | None = None,
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    session: str | None = None,
    title: str | None = None,
    embedder: Embedder | None = None,
    reports: str | Path | None = None,
    **overrides: Any,
) -> RunResult:
    """Debate `passage` (or answer `question`, about the passage when there is one) as a
    new session in `store` and return its result: the same as `Workspace(store).run(...)`,
    opened and closed around it. Keyword `overrides` are settings (`llm="fake"`,
    `rounds=1`, ...).

    Works where an event loop is already running (Jupyter): the session then runs on a
    loop of its own in a worker thread, and this call waits for it."""

    async def main() -> RunResult:
        async with Workspace(store, embedder=embedder, reports=reports) as ws:
            return await ws.run(
                passage,
                question=question,
                settings=settings,
                client=client,
                session=session,
                title=title,
                **overrides,
            )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return aio.run(main())
    with ThreadPoolExecutor(1, thread_name_prefix="dagmca-run") as pool:
        return pool.submit(aio.run, main()).result()


def in_workspace(
    store: str | Path | GraphStore | None,
    work: Callable[[Workspace], Awaitable[T]],
    *,
    embedder: Embedder | None = None,
) -> T:
    """`work(workspace)` on a workspace opened around it, on an event loop of its own:
    what a synchronous caller (the CLI) runs a session's work with."""

    async def main() -> T:
        async with Workspace(store, embedder=embedder) as ws:
            return await work(ws)

    return aio.run(main())
