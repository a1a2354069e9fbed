"""An MCP client session with `dagmca mcp` over stdio, and calls to its tools."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.sandbox import process_env

Work = Callable[[ClientSession], Awaitable[None]]


def server_args(store: Path, *extra: str) -> list[str]:
    llm = [] if "--llm" in extra else ["--llm", "fake"]
    return ["-m", "dagmca", "mcp", "--store", str(store), *llm, *extra]


def over_stdio(store: Path, work: Work, *extra: str, env: dict[str, str] | None = None) -> None:
    """`work` in a client session with `dagmca mcp` started over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=server_args(store, *extra), env=process_env(env), cwd=store.parent
    )

    async def go() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await work(session)

    asyncio.run(asyncio.wait_for(go(), 240))


async def call(session: ClientSession, tool: str, /, **arguments: Any) -> Any:
    """A tool's data; a tool error fails the test."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    return data["result"] if set(data) == {"result"} else data


async def refused(session: ClientSession, tool: str, /, **arguments: Any) -> str:
    """The one line of a tool error."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    [content] = result.content
    text = str(getattr(content, "text", ""))
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    return text
