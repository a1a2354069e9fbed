"""The event loop a session runs on: uvloop where it installs (Linux, macOS), else
asyncio's own. A large session spent a tenth of its event loop's time in asyncio's
scheduling and transports; uvloop does both in C."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:  # Windows: asyncio's loop
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, on the faster loop when there is one."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


@contextlib.asynccontextmanager
async def cancelled_on_failure(task: asyncio.Task[Any]) -> AsyncIterator[None]:
    """Work done while `task` runs beside it: if the work fails, `task` is cancelled and
    its outcome retrieved before the failure goes on, so a call of the task's that
    failed the same way (the endpoint went down) is not reported a second time."""
    try:
        yield
    except BaseException:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
