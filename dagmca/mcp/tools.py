"""What the MCP server's tools do, over an open `Workspace`: each returns plain JSON-ready
data, and each failure is a `dagmca.errors` exception the server turns into one tool
error line."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from dagmca.config.session import BUDGETS
from dagmca.errors import UserError
from dagmca.graph import NodeKind, NodeRecord, TensionNode, TensionStatus, node_from_record
from dagmca.mcp.readonly import QueryLimits, read_query
from dagmca.store.base import GraphStore

if TYPE_CHECKING:
    from dagmca.api import Workspace
    from dagmca.config import SessionConfig
    from dagmca.graph import SessionNode

# A run asked for by an assistant, when the settings set no budget of their own: a cap on
# its calls, so one tool call cannot spend without bound.
RUN_CALL_CAP = 400
MAX_RELATIONSHIPS = 100  # of a node's relationships, listed with it
RUN_DISABLED = "run is disabled on this server: start it with `dagmca mcp --allow-run` to allow runs"


def session_summary(node: SessionNode) -> dict[str, Any]:
    return {
        "id": node.id,
        "title": node.title,
        "status": node.status,
        "question": node.question,
        "model": node.model,
        "started_at": node.started_at,
        "finished_at": node.finished_at,
        "source": node.source,
    }


def node_data(record: NodeRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind.value,
        "session": record.session,
        "labels": list(record.labels),
        "created_at": record.created_at,
        "props": record.props,
    }


def run_settings(cfg: SessionConfig) -> SessionConfig:
    """`cfg`, capped: without a budget of its own, at most `RUN_CALL_CAP` calls."""
    if any(getattr(cfg, name) is not None for name in BUDGETS):
        return cfg
    return cfg.model_copy(update={"max_llm_calls": RUN_CALL_CAP})


def _open_stubs(store: GraphStore, sessions: list[str]) -> list[dict[str, Any]]:
    stubs = [
        node
        for session in sessions
        for record in store.nodes(session, NodeKind.TENSION)
        if isinstance(node := node_from_record(record), TensionNode) and node.status is TensionStatus.STUB
    ]
    stubs.sort(key=lambda n: (-n.urgency, n.id))
    return [
        {
            "id": n.id,
            "session": n.session,
            "debate": n.debate,
            "question": n.question,
            "urgency": n.urgency,
            "rationale": n.rationale,
            "category": n.category.value,
            "checks": [c.model_dump(mode="json") for c in n.revisit_checks],
        }
        for n in stubs
    ]


def _node_with_relationships(store: GraphStore, node_id: str) -> dict[str, Any]:
    record = store.get_node(node_id)
    if record is None:
        raise UserError(f"no node {node_id!r} in {store.location}", "node ids look like SESSION/debate/...")
    touching = [e for e in store.edges(record.session) if node_id in (e.source, e.target)]
    data = node_data(record)
    data["relationships"] = [
        {"type": e.type.value, "from": e.source, "to": e.target, **e.props}
        for e in touching[:MAX_RELATIONSHIPS]
    ]
    data["relationships_left_out"] = max(0, len(touching) - MAX_RELATIONSHIPS)
    return data


class GraphTools:
    """The tools over one open workspace. `settings`: what an answer's model and a run
    use; `allow_run`: whether `run` may start sessions."""

    def __init__(
        self,
        workspace: Workspace,
        settings: SessionConfig,
        *,
        allow_run: bool,
        query_limits: QueryLimits | None = None,
    ) -> None:
        self.ws = workspace
        self.settings = settings
        self.allow_run = allow_run
        self.query_limits = query_limits or QueryLimits()

    async def _scope(self, session: str | None) -> list[str]:
        """`session` (which must exist), else every session of the store."""
        if session:
            return [(await self.ws.session(session)).id]
        return [s.id for s in await self.ws.sessions()]

    async def list_sessions(self) -> list[dict[str, Any]]:
        return [session_summary(s) for s in await self.ws.sessions()]

    async def show_session(self, session: str) -> dict[str, Any]:
        node = await self.ws.session(session)
        records = await self.ws.store.aread(lambda s: s.nodes(session))
        kinds = Counter(r.kind.value for r in records)
        final = next((r for r in records if r.kind is NodeKind.FINAL), None)
        stubs = sum(
            1
            for r in records
            if r.kind is NodeKind.TENSION and r.props.get("status") == TensionStatus.STUB.value
        )
        return {
            **session_summary(node),
            "passage": node.passage,
            "final": str(final.props.get("text", "")) if final is not None else None,
            "answer": final.props.get("answer") if final is not None else None,
            "nodes": dict(sorted(kinds.items())),
            "open_questions": stubs,
        }

    async def ask(
        self, question: str, session: str | None = None, *, retrieve_only: bool = False
    ) -> dict[str, Any]:
        sessions = await self._scope(session)
        if not sessions:
            raise UserError("the store holds no session yet", "run one first: `dagmca run PASSAGE`")
        answer = await self.ws.ask(
            question, sessions=sessions, settings=self.settings, retrieve_only=retrieve_only
        )
        return answer.model_dump(mode="json")

    async def query(self, cypher: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        limits = self.query_limits
        keys, rows = await read_query(self.ws.store, cypher, dict(params or {}), limits)
        if limits.rows is not None and len(rows) > limits.rows:
            return {
                "columns": keys,
                "rows": rows[: limits.rows],
                "truncated": True,
                "note": f"only the first {limits.rows} rows are shown; add a LIMIT or narrow the query",
            }
        return {"columns": keys, "rows": rows, "truncated": False}

    async def get_node(self, node_id: str) -> dict[str, Any]:
        return await self.ws.store.aread(lambda s: _node_with_relationships(s, node_id))

    async def open_questions(self, session: str | None = None) -> list[dict[str, Any]]:
        sessions = await self._scope(session)
        return await self.ws.store.aread(lambda s: _open_stubs(s, sessions))

    async def run(
        self, passage: str | None = None, question: str | None = None, title: str | None = None
    ) -> dict[str, Any]:
        if not self.allow_run:
            raise UserError(RUN_DISABLED)
        cfg = run_settings(self.settings)
        result = await self.ws.run(passage=passage, question=question, settings=cfg, title=title)
        spend = result.spend
        return {
            **session_summary(result.session),
            "final": result.final.text if result.final is not None else None,
            "answer": result.final.answer if result.final is not None else None,
            "problems": result.problems,
            "spend": {"calls": spend.calls, "cache_hits": spend.cache_hits, "cost_usd": spend.cost_usd},
            "budget": {name: getattr(cfg, name) for name in BUDGETS},
        }
