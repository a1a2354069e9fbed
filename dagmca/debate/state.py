"""What one running session shares: settings, store, LLM, embedder, and the nodes so far."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.debate.contexts import AgentContexts
from dagmca.debate.router import Router
from dagmca.llm.base import CallMeta, Completion, LLMError, Message
from dagmca.llm.metered import MeteredLLM
from dagmca.models import (
    AgentNode,
    DebateNode,
    EdgeRecord,
    EdgeType,
    GraphNode,
    SynthesisNode,
    TensionNode,
    TensionStatus,
    edge,
)
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore


class Events(Protocol):
    """Progress reporting: the CLI renders these; tests may record them."""

    def emit(self, event: str, **data: Any) -> None: ...


class NoEvents:
    def emit(self, event: str, **data: Any) -> None:
        return None


@dataclass
class SessionState:
    config: SessionConfig
    session_id: str
    store: GraphStore
    llm: MeteredLLM
    embedder: Embedder
    passage: str
    events: Events = field(default_factory=NoEvents)
    debates: dict[str, DebateNode] = field(default_factory=dict)
    tensions: dict[str, TensionNode] = field(default_factory=dict)
    syntheses: dict[str, SynthesisNode] = field(default_factory=dict)
    node_ids: set[str] = field(default_factory=set)  # every node written so far (--max-nodes)
    revisits_used: int = 0
    phase: str = "starting"
    _agents: set[str] = field(default_factory=set)
    tension_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    revisit_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    contexts: AgentContexts = field(init=False)
    router: Router = field(init=False)

    def __post_init__(self) -> None:
        cfg = self.config
        self.contexts = AgentContexts(cfg.agent_context_size)
        self.router = Router(cfg.router, cfg.perspectives, seed=cfg.seed, temperature=cfg.router_temperature)

    def write(self, nodes: Sequence[GraphNode] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """One event, one transaction: nodes are written before the edges that use them."""
        self.store.write([n.to_record() for n in nodes], list(edges))
        self.track(nodes)

    def track(self, nodes: Sequence[GraphNode]) -> None:
        """Keep written (or, on a revisit, reloaded) nodes in the session's memory."""
        self.node_ids.update(n.id for n in nodes)
        for n in nodes:
            if isinstance(n, DebateNode):
                self.debates[n.id] = n
            elif isinstance(n, TensionNode):
                self.tensions[n.id] = n
            elif isinstance(n, SynthesisNode):
                self.syntheses[n.id] = n

    async def ask(
        self,
        messages: list[Message],
        *,
        max_tokens: int,
        meta: CallMeta,
        schema: type[BaseModel] | None = None,
    ) -> Completion | None:
        """One call with the session's sampling settings. A call that still fails after
        its retries and repair is reported and gives None: the caller degrades (a lost
        flag, a skipped merge), the run goes on."""
        try:
            return await self.llm.complete(
                messages,
                schema=schema,
                max_tokens=max_tokens,
                temperature=self.config.temperature,
                seed=self.config.seed,
                meta=meta,
            )
        except LLMError as exc:
            self.events.emit("call_failed", debate=meta.debate, agent=meta.agent, error=str(exc))
            return None

    def edge(self, source: str, target: str, type_: EdgeType, **props: Any) -> EdgeRecord:
        return edge(source, target, type_, self.session_id, **props)

    def agent_node(self, name: str, role: Any, perspective: str, level: int) -> AgentNode | None:
        """The session's Agent node for `name`, the first time it is needed."""
        node_id = f"{self.session_id}/agent/{name}"
        if node_id in self._agents:
            return None
        self._agents.add(node_id)
        return AgentNode(
            id=node_id, session=self.session_id, name=name, role=role, perspective=perspective, level=level
        )

    def agent_id(self, name: str) -> str:
        return f"{self.session_id}/agent/{name}"

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.events.emit("phase", phase=phase)

    def room_for_debates(self) -> int | None:
        """How many more debates fit under --max-nodes (None: no cap), estimated from the
        nodes per debate so far and keeping two for a synthesis and the final."""
        cap = self.config.max_nodes
        if cap is None:
            return None
        per_debate = len(self.node_ids) / max(1, len(self.debates))
        return max(0, int((cap - 2 - len(self.node_ids)) // max(1.0, per_debate)))

    def open_stubs(self) -> list[TensionNode]:
        return [t for t in self.tensions.values() if t.status is TensionStatus.STUB]
