"""`dagmca.run`, `dagmca.build` and `dagmca.evaluate`: a session, a corpus build or an
evaluation from a script, without writing async code. Each opens a `Workspace` around
its work and closes it after."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar, Unpack

from dagmca import aio
from dagmca.api.building import BuildResult
from dagmca.api.workspace import Workspace
from dagmca.config.overrides import OpenEvalOverrides, OpenOverrides
from dagmca.evaluation import EvalReport, Task
from dagmca.evaluation.options import EvalOptions
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore
from dagmca.workspace import ClientLike, RunResult, SettingsLike

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
    **overrides: Unpack[OpenOverrides],
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

    return blocking(main())


def build(
    sources: Sequence[str | Path],
    *,
    store: str | Path | GraphStore | None = None,
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    parallel: int | None = None,
    cross_revisits: int = 3,
    embedder: Embedder | None = None,
    reports: str | Path | None = None,
    **overrides: Unpack[OpenEvalOverrides],
) -> BuildResult:
    """Debate many passages (files, folders, JSONL) into `store`, a session each: the
    same as `Workspace(store).build(...)`, opened and closed around it. Run it again to
    resume. Works where an event loop is already running, as `run` does."""

    async def main() -> BuildResult:
        async with Workspace(store, embedder=embedder, reports=reports) as ws:
            return await ws.build(
                sources,
                settings=settings,
                client=client,
                parallel=parallel,
                cross_revisits=cross_revisits,
                **overrides,
            )

    return blocking(main())


def evaluate(
    tasks: str | Path | Sequence[Task] | None = None,
    *,
    suite: str | None = None,
    store: str | Path | GraphStore | None = None,
    options: EvalOptions | Mapping[str, Any] | None = None,
    settings: SettingsLike = None,
    client: ClientLike | None = None,
    embedder: Embedder | None = None,
    **overrides: Unpack[OpenEvalOverrides],
) -> EvalReport:
    """Run (or finish) an evaluation of `tasks` (or a generated `suite`) in `store`:
    the same as `Workspace(store).eval(...)`, opened and closed around it. `options`:
    an `EvalOptions` (or a mapping of its fields: arms, repeats, eval id, ...); keyword
    `overrides` are settings. Works where an event loop is already running, as `run`
    does."""

    async def main() -> EvalReport:
        async with Workspace(store, embedder=embedder) as ws:
            return await ws.eval(
                tasks, suite=suite, options=options, settings=settings, client=client, **overrides
            )

    return blocking(main())


def blocking(work: Coroutine[Any, Any, T]) -> T:
    """`work` run to its end: on an event loop of its own, or, where one is already
    running (Jupyter), on a loop of its own in a worker thread that this call waits for."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return aio.run(work)
    with ThreadPoolExecutor(1, thread_name_prefix="dagmca-run") as pool:
        return pool.submit(aio.run, work).result()


def in_workspace(
    store: str | Path | GraphStore | None,
    work: Callable[[Workspace], Awaitable[T]],
    *,
    embedder: Embedder | str | None = None,
) -> T:
    """`work(workspace)` on a workspace opened around it, on an event loop of its own:
    what a synchronous caller (the CLI) runs a session's work with."""

    async def main() -> T:
        async with Workspace(store, embedder=embedder) as ws:
            return await work(ws)

    return aio.run(main())
