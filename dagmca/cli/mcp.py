"""`dagmca mcp`: serve the store to an MCP client (an assistant, an agent) over stdio or
streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer

from dagmca.cli import options as o
from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.store import open_existing, resolve_store

Http = Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")]
Port = Annotated[
    int, typer.Option("--port", min=0, max=65535, help="The HTTP port (0: any free one, printed).")
]
QueryTimeout = Annotated[
    float,
    typer.Option(
        "--query-timeout",
        min=0,
        metavar="SECONDS",
        help="How long one `query` may run before it is stopped (0: no limit).",
    ),
]
QueryRows = Annotated[
    int,
    typer.Option(
        "--query-rows",
        min=0,
        help="The most rows one `query` returns; it says when more were left out (0: all).",
    ),
]
AllowRun = Annotated[
    bool,
    typer.Option(
        "--allow-run",
        help="Let the `run` tool start sessions (spending LLM calls, under a budget cap).",
    ),
]


@o.with_settings()
def mcp(
    cfg: SessionConfig,
    http: Http = False,
    port: Port = 8000,
    allow_run: AllowRun = False,
    query_timeout: QueryTimeout = 10.0,
    query_rows: QueryRows = 1000,
    store: o.Store = None,
) -> None:
    """Serve the store over MCP: tools to list and show sessions, ask the graph (answer,
    citations, dissent), search it, run read-only Cypher, read a node and list the open
    questions; `run` only with --allow-run. Stdio by default (what an MCP client starts);
    --http serves streamable HTTP at http://127.0.0.1:PORT/mcp. The settings are the
    answers' model's (and a run's)."""
    try:
        from dagmca.mcp import QueryLimits, ServeOptions, serve
    except ImportError:
        raise UserError(
            "the MCP server needs the `mcp` package", "install it: pip install 'dagmca[mcp]'"
        ) from None
    from dagmca import aio

    location = resolve_store(store)
    with open_existing(location):  # a mistyped --store is refused, not served empty
        pass
    options = ServeOptions(
        store=location,
        settings=cfg,
        allow_run=allow_run,
        http=http,
        port=port,
        query_limits=QueryLimits(query_timeout or None, query_rows or None),
    )
    # Ctrl-C ends an HTTP server: it holds nothing half-written
    with contextlib.suppress(KeyboardInterrupt):
        aio.run(serve(options))
