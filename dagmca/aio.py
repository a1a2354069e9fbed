"""The event loop a session runs on: uvloop where it installs (Linux, macOS), else
asyncio's own. A large session spent a tenth of its event loop's time in asyncio's
scheduling and transports; uvloop does both in C."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
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
