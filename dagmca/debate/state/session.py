"""`SessionState`: what one running session shares, its parts (handles, the graph built
so far, counts, the prompts' space: a module each) composed, with what steers its run."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.debate.contexts import AgentContexts, persona_id
from dagmca.debate.events import CallFailed, EventSink, NodeCapReached, NoEvents, PhaseChanged, Reasked
from dagmca.debate.router import Router
from dagmca.debate.state.counts import Counts
from dagmca.debate.state.graph_so_far import GraphSoFar
from dagmca.debate.state.handles import Handles
from dagmca.debate.state.prompt_space import PromptSpace
from dagmca.graph import AgentNode, EdgeRecord, EdgeType, GraphNode, Role
from dagmca.graph.store_nodes import PersonaMemory
from dagmca.llm.base import CallMeta, Completion, LLMError, Request
from dagmca.llm.degenerate import REASK_TEMPERATURE, degeneration, scaffolding
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.tokens import ContextWindow
from dagmca.metrics.session import SessionMetrics
from dagmca.prompts.budget import Prompt, PromptBudget
from dagmca.prompts.templates import passage_block
from dagmca.prompts.text import drop_repeats, tidy
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore

# what the personas knew when the session started, by perspective
Memory = dict[str, PersonaMemory]


class SessionState:
    """One running session, by concern: its `handles` (settings, store, LLM, embedder,
    events), the `graph` built so far, its `counts`, and its `prompts`' space; beside
    them, what the session is about (the passage, the question) and what steers its run.
    Each step reads the part it uses."""

    def __init__(
        self,
        config: SessionConfig,
        session_id: str,
        store: BackgroundStore,
        llm: MeteredLLM,
        embedder: Embedder,
        passage: str,
        budget: PromptBudget,
        window: ContextWindow,
        events: EventSink | None = None,
        judge_budget: PromptBudget | None = None,
        question: str | None = None,
    ) -> None:
        self.handles = Handles(config, session_id, store, llm, embedder, events or NoEvents())
        self.graph = GraphSoFar()
        self.counts = Counts()
        self.prompts = PromptSpace(budget, window, passage_block(passage), judge_budget)
        self.passage = passage
        # the question the user asked of the passage (None: the open reading of it)
        self.question = question
        self.metrics: SessionMetrics | None = None
        # what runs beside the debates and nothing decides on before the session's end (a
        # branch's REFERENCES edges): awaited by `settle`, so no debate waits for its vectors
        self.beside: list[asyncio.Task[None]] = []
        self.phase = "starting"
        self.memory: Memory = {}  # the personas, as the session started (--agent-memory)
        self.revisit_lock = asyncio.Lock()
        self.contexts = AgentContexts(config.agent_context_size)
        self.router = Router(
            config.router, config.perspectives, seed=config.seed, temperature=config.router_temperature
        )

    async def settle(self) -> None:
        """Wait for the work run beside the debates (`beside`)."""
        while self.beside:
            tasks, self.beside = self.beside, []
            await asyncio.gather(*tasks)

    def abandon(self) -> None:
        """Cancel the work run beside the debates: the session stopped before its end."""
        tasks, self.beside = self.beside, []
        for task in tasks:
            task.cancel()

    def write(self, nodes: Sequence[GraphNode] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """One event, one transaction: nodes are written before the edges that use them.
        Queued, not awaited: the store's thread writes in the order of the calls."""
        self.handles.store.write([n.to_record() for n in nodes], list(edges))
        self.graph.track(nodes)

    async def ask(
        self,
        prompt: Prompt,
        *,
        max_tokens: int,
        meta: CallMeta,
        schema: type[BaseModel] | None = None,
    ) -> Completion | None:
        """One call with the session's sampling settings. A call that still fails after
        its retries and repair is reported and gives None: the caller degrades (a lost
        flag, a skipped merge), the run goes on."""
        if prompt.omitted_chars:
            meta = meta.model_copy(update={"omitted_chars": prompt.omitted_chars})
        cfg = self.handles.config
        done = await self._complete(prompt, schema, max_tokens, meta, cfg.temperature, cfg.seed)
        if done is None or schema is not None:
            return done  # structured replies: their fields are checked where they are used
        return await self._guard(prompt, done, max_tokens, meta)

    async def _complete(
        self,
        prompt: Prompt,
        schema: type[BaseModel] | None,
        max_tokens: int,
        meta: CallMeta,
        temperature: float,
        seed: int,
    ) -> Completion | None:
        try:
            request = Request(
                prompt.messages,
                schema=schema,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                meta=meta,
            )
            return await self.handles.llm.complete(request)
        except LLMError as exc:
            self.handles.emit(CallFailed(debate=meta.debate, agent=meta.agent, error=str(exc)))
            return None

    async def _guard(self, prompt: Prompt, done: Completion, max_tokens: int, meta: CallMeta) -> Completion:
        """A reply that loops or echoes its prompt is asked again once, with varied
        sampling (a loop is where greedy decoding got stuck; sampling gets it out); one
        still degenerate is kept, marked, for the record."""
        own_words = scaffolding(prompt.messages)
        reason = degeneration(self.clean(done.text), own_words)
        if reason is None:
            return done
        again = await self._complete(
            prompt,
            None,
            max_tokens,
            meta.model_copy(update={"reask": True}),
            max(REASK_TEMPERATURE, self.handles.config.temperature),
            self.handles.config.seed + 1,
        )
        still = degeneration(self.clean(again.text), own_words) if again is not None else reason
        self.handles.emit(Reasked(debate=meta.debate, agent=meta.agent, reason=reason, mended=still is None))
        if again is not None and still is None:
            return again
        return (again or done).model_copy(update={"degenerate": still or reason})

    def clean(self, text: str) -> str:
        """A model's text as it is stored: its tags and trailing space tidied; the local
        135M model's looping repeats dropped (the one backend known to loop)."""
        text = tidy(text)
        return drop_repeats(text) if self.handles.config.llm == "local" else text

    def agent_node(self, name: str, role: Role, perspective: str, level: int) -> AgentNode | None:
        """The session's Agent node for `name`, the first time it is needed."""
        node_id = self.agent_id(name)
        if node_id in self.graph.agents:
            return None
        self.graph.agents.add(node_id)
        return AgentNode(
            id=node_id,
            session=self.handles.session_id,
            name=name,
            role=role,
            perspective=perspective,
            level=level,
        )

    def plays(self, seat: AgentNode) -> list[EdgeRecord]:
        """The seat's PLAYS edge to its persona, when it plays one of the pool's perspectives."""
        if seat.perspective not in self.memory:
            return []
        return [self.handles.edge(seat.id, persona_id(seat.perspective), EdgeType.PLAYS)]

    def agent_id(self, name: str) -> str:
        return f"{self.handles.session_id}/agent/{name}"

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        tracing.phase(phase)
        self.handles.emit(PhaseChanged(phase=phase))

    def can_branch(self) -> bool:
        """Whether a new branch may start: room under --max-nodes, and budget for one
        debate round (and one for each branch waiting to run) with the final integration
        still in reserve."""
        if self.graph.room_for_debates(self.handles.config.max_nodes) == 0:
            self.handles.emit(NodeCapReached(nodes=len(self.graph.node_ids)))
            return False
        rounds = 1 + len(self.graph.waiting)
        return not self.handles.llm.exhausted(
            reserve_calls=self.handles.config.per_round_calls() * rounds + 1
        )
