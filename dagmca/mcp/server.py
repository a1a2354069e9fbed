"""The MCP server: the tools and resources of `GraphTools` on the official SDK's
`MCPServer`, served over stdio or streamable HTTP on 127.0.0.1, with one workspace
(the store, its writer thread, the embedder) open for the server's life."""

from __future__ import annotations

import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations

from dagmca.config import SessionConfig
from dagmca.errors import DagmcaError, UserError
from dagmca.mcp.readonly import QueryLimits
from dagmca.mcp.tools import RUN_CALL_CAP, GraphTools

T = TypeVar("T")
HOST = "127.0.0.1"  # never another interface: the server has no authentication
PATH = "/mcp"
INSTRUCTIONS = (
    "dagmca's graph of LLM debates. `ask` answers a question from the debates, with the node ids "
    "it rests on and what is still disputed; `search` ranks the nodes without a model; `query` "
    "runs read-only Cypher; `get_node` reads one node; `open_questions` lists the stubs nobody "
    "explored. Cite node ids as they are given."
)
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@dataclass(frozen=True)
class ServeOptions:
    """How to serve: the store's location, the settings an answer's model (and a run)
    use, whether `run` is allowed, HTTP on `port` (0: any free one) or stdio, and what
    one `query` may take."""

    store: str
    settings: SessionConfig
    allow_run: bool = False
    http: bool = False
    port: int = 8000
    query_limits: QueryLimits = field(default_factory=QueryLimits)


async def _tool(work: Awaitable[T]) -> T:
    """A tool's result, or its failure as one tool error line (never a traceback)."""
    try:
        return await work
    except DagmcaError as exc:
        raise ToolError(exc.line()) from None


def build_server(tools: GraphTools) -> MCPServer[Any]:
    """An `MCPServer` whose tools and resources call `tools`."""
    server: MCPServer[Any] = MCPServer("dagmca", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READ)
    async def list_sessions() -> list[dict[str, Any]]:
        """The store's sessions, oldest first: id, title, status, question, model, times."""
        return await _tool(tools.list_sessions())

    @server.tool(annotations=READ)
    async def show_session(session: str) -> dict[str, Any]:
        """One session: its passage, final answer, node counts by kind and open questions."""
        return await _tool(tools.show_session(session))

    @server.tool(annotations=READ)
    async def ask(question: str, session: str | None = None) -> dict[str, Any]:
        """Ask the graph (one session, else every session): an answer whose statements cite
        node ids (each checked: it exists and was in the answer's context), the dissent
        (contradictions no synthesis reconciled, open questions) and the retrieved nodes."""
        return await _tool(tools.ask(question, session))

    @server.tool(annotations=READ)
    async def search(question: str, session: str | None = None) -> dict[str, Any]:
        """The nodes a question is about, ranked (embeddings and full-text search fused), with
        their expansion along the graph and the dissent; no model is asked."""
        return await _tool(tools.ask(question, session, retrieve_only=True))

    @server.tool(annotations=READ)
    async def query(cypher: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Read-only Cypher on the store (use $name for `params`): its columns and rows. A
        query that writes (CREATE, MERGE, SET, DELETE, REMOVE, DROP, LOAD CSV, a procedure
        that is not known to read) is refused and nothing is written. A query has a time
        limit (10 s unless the server sets another) and returns at most 1,000 rows
        (`truncated` says when rows were left out: add a LIMIT or narrow it)."""
        return await _tool(tools.query(cypher, params))

    @server.tool(annotations=READ)
    async def get_node(node_id: str) -> dict[str, Any]:
        """One node by id: its kind, session, labels, properties and relationships."""
        return await _tool(tools.get_node(node_id))

    @server.tool(annotations=READ)
    async def open_questions(session: str | None = None) -> list[dict[str, Any]]:
        """The open stubs (questions the debates raised and nobody explored), most urgent
        first, each with the checks revisits made of it."""
        return await _tool(tools.open_questions(session))

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
    )
    async def run(
        passage: str | None = None, question: str | None = None, title: str | None = None
    ) -> dict[str, Any]:
        """Debate a passage (and/or a question) as a new session and return its final answer.
        Only on a server started with --allow-run; without a budget in the settings a run
        is capped at the number of calls the result's `budget` shows."""
        return await _tool(tools.run(passage, question, title))

    @server.resource("dagmca://sessions", mime_type="application/json")
    async def sessions_resource() -> list[dict[str, Any]]:
        """Every session of the store, summarised."""
        return await _resource(tools.list_sessions())

    @server.resource("dagmca://session/{session}", mime_type="application/json")
    async def session_resource(session: str) -> dict[str, Any]:
        """One session, summarised: its final answer, node counts, open questions."""
        return await _resource(tools.show_session(session))

    return server


async def _resource(work: Awaitable[T]) -> T:
    try:
        return await work
    except DagmcaError as exc:
        raise ResourceError(exc.line()) from None


def _listening(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:`port` (0: a free port), listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {HOST}:{port}: {exc.strerror}", "choose another --port") from None
    sock.listen(128)
    return sock


async def _serve_http(server: MCPServer[Any], port: int, announce: Callable[[str], None]) -> None:
    import uvicorn

    sock = _listening(port)
    app = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    bound = sock.getsockname()[1]
    announce(f"dagmca mcp: serving on http://{HOST}:{bound}{PATH}")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()


async def serve(options: ServeOptions, announce: Callable[[str], None] | None = None) -> None:
    """Open the workspace and serve until the client goes (stdio) or the process is
    stopped (HTTP). `announce`: where the HTTP address is said (default: stderr)."""
    from dagmca.api import Workspace

    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    async with Workspace(options.store) as ws:
        tools = GraphTools(
            ws, options.settings, allow_run=options.allow_run, query_limits=options.query_limits
        )
        server = build_server(tools)
        if options.http:
            await _serve_http(server, options.port, say)
        else:
            await server.run_stdio_async()


__all__ = ["RUN_CALL_CAP", "QueryLimits", "ServeOptions", "build_server", "serve"]
