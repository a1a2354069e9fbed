"""`dagmca mcp`: the stored graph for assistants and agents, as an MCP server on the
official `mcp` SDK (the optional extra `mcp`). Tools read the graph (sessions, ask,
search, read-only Cypher, nodes, open questions); `run` starts sessions only when the
server was started to allow it."""

from dagmca.mcp.server import QueryLimits, ServeOptions, build_server, serve

__all__ = ["QueryLimits", "ServeOptions", "build_server", "serve"]
