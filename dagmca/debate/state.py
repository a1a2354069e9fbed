"""What one running session shares: settings, store, LLM, embedder, and the nodes so far."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.debate.contexts import AgentContexts, persona_id
from dagmca.debate.events import CallFailed, Event, EventSink, NodeCapReached, NoEvents, PhaseChanged, Reasked
from dagmca.debate.outcomes import DebateOutcome
from dagmca.debate.router import Router
from dagmca.graph import (
    AgentNode,
    DebateNode,
    EdgeRecord,
    EdgeType,
    FinalNode,
    GraphNode,
    Role,
    SectionNode,
    SessionNode,
    SynthesisNode,
    TensionNode,
    TensionStatus,
    edge,
)
from dagmca.llm.base import CallMeta, Completion, LLMError, Request
from dagmca.llm.degenerate import REASK_TEMPERATURE, degeneration, scaffolding
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.tokens import ContextWindow
from dagmca.metrics.session import SessionMetrics
from dagmca.prompts.budget import Part, Prompt, PromptBudget
from dagmca.prompts.templates import Frame, passage_block
from dagmca.prompts.text import drop_repeats, tidy
from dagmca.similarity import Embedder
from dagmca.similarity.counts import EmbedCounts
from dagmca.store.background import BackgroundStore

FrameFactory = Callable[[], Frame]
Background = Callable[[], Sequence[Part]]
# what the personas knew when the session started: perspective -> {"kept": [texts],
# "record": {category: [trials, successes]}}
Memory = dict[str, dict[str, Any]]


@dataclass
class SessionState:
    config: SessionConfig
    session_id: str
    # Writes are queued to the store's own thread; reads are awaited (`store.aread`).
    store: BackgroundStore
    llm: MeteredLLM
    embedder: Embedder
    passage: str
    budget: PromptBudget  # what a prompt may hold, in the model's tokens
    window: ContextWindow
    events: EventSink = field(default_factory=NoEvents)
    # the judge role's, when its model's window is not the debate model's
    judge_budget: PromptBudget | None = None
    # the question the user asked of the passage (None: the open reading of it)
    question: str | None = None
    session: SessionNode | None = None
    debates: dict[str, DebateNode] = field(default_factory=dict)
    tensions: dict[str, TensionNode] = field(default_factory=dict)
    # the same tensions by debate, in the order they were recorded
    tensions_of: dict[str, dict[str, TensionNode]] = field(default_factory=dict)
    syntheses: dict[str, SynthesisNode] = field(default_factory=dict)
    outcomes: dict[str, DebateOutcome] = field(default_factory=dict)  # debate id -> what it produced
    # (later, earlier, reason) of branch pairs judged to contradict, for the integrator
    contradictions: list[tuple[DebateNode, DebateNode, str]] = field(default_factory=list)
    final: FinalNode | None = None
    metrics: SessionMetrics | None = None
    node_ids: set[str] = field(default_factory=set)  # every node written so far (--max-nodes)
    # the passage in prompts: whole, or (long passages) sections, mapped and retrieved
    passage_mode: str = "whole"
    passage_tokens: int = 0
    sections: list[SectionNode] = field(default_factory=list)
    default_block: str = ""  # the passage block of a debate without one of its own
    passage_blocks: dict[str, str] = field(default_factory=dict)  # debate id -> its passage block
    # observers' calls and the ones that failed: all failing is a problem worth an exit code
    flag_calls: int = 0
    flag_failures: int = 0
    revisits_used: int = 0
    # debates made and not yet run to their end (the budget keeps a round for each)
    waiting: set[str] = field(default_factory=set)
    # branches made and not yet committed (explore.py): their flags are not open stubs
    # to anyone else yet, as which of them a running debate has flagged so far depends
    # on latency
    uncommitted: set[str] = field(default_factory=set)
    dropped_tensions: int = 0  # observers' questions that looped or restated the instructions
    # this run's texts embedded, cache hits and embed-waits (the embedder may be shared)
    embed_counts: EmbedCounts = field(default_factory=EmbedCounts)
    # what runs beside the debates and nothing decides on before the session's end (a
    # branch's REFERENCES edges): awaited by `settle`, so no debate waits for its vectors
    beside: list[asyncio.Task[None]] = field(default_factory=list)
    phase: str = "starting"
    memory: Memory = field(default_factory=dict)  # the personas, as the session started (--agent-memory)
    _agents: set[str] = field(default_factory=set)
    revisit_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    contexts: AgentContexts = field(init=False)
    router: Router = field(init=False)

    def __post_init__(self) -> None:
        cfg = self.config
        self.contexts = AgentContexts(cfg.agent_context_size)
        self.router = Router(cfg.router, cfg.perspectives, seed=cfg.seed, temperature=cfg.router_temperature)
        self.default_block = passage_block(self.passage)

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

    def emit(self, event: Event) -> None:
        tracing.event(event.name, event.data, event.words)  # on the current span, when traced
        self.events.emit(event)

    def write(self, nodes: Sequence[GraphNode] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """One event, one transaction: nodes are written before the edges that use them.
        Queued, not awaited: the store's thread writes in the order of the calls."""
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
                self.tensions_of.setdefault(n.debate, {})[n.id] = n
            elif isinstance(n, SynthesisNode):
                self.syntheses[n.id] = n

    def track_contradictions(self, edges: Sequence[EdgeRecord]) -> None:
        """Rebuild the pairs judged to contradict from their stored CONTRADICTS edges
        (later -> earlier, the judge's reason): a reloaded session's final integration
        gives them with both positions, as the run that judged them did."""
        known = {(later.id, earlier.id) for later, earlier, _ in self.contradictions}
        for e in edges:
            if e.type is not EdgeType.CONTRADICTS or (e.source, e.target) in known:
                continue
            later, earlier = self.debates.get(e.source), self.debates.get(e.target)
            if later is not None and earlier is not None:
                self.contradictions.append((later, earlier, str(e.props.get("reason", ""))))
                known.add((e.source, e.target))

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
        cfg = self.config
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
            return await self.llm.complete(request)
        except LLMError as exc:
            self.emit(CallFailed(debate=meta.debate, agent=meta.agent, error=str(exc)))
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
            max(REASK_TEMPERATURE, self.config.temperature),
            self.config.seed + 1,
        )
        still = degeneration(self.clean(again.text), own_words) if again is not None else reason
        self.emit(Reasked(debate=meta.debate, agent=meta.agent, reason=reason, mended=still is None))
        if again is not None and still is None:
            return again
        return (again or done).model_copy(update={"degenerate": still or reason})

    def frame(
        self, debate: DebateNode, background: Callable[[], Sequence[Part]] | None = None
    ) -> FrameFactory:
        """What every prompt of `debate` carries, built per prompt (a branch's background
        changes while it runs)."""

        def build() -> Frame:
            return Frame(
                question=debate.question,
                passage=self.passage_blocks.get(debate.id, self.default_block),
                budget=self.budget,
                background=tuple(background()) if background else (),
                judge=self.judge_budget,
            )

        return build

    def clean(self, text: str) -> str:
        """A model's text as it is stored: its tags and trailing space tidied; the local
        135M model's looping repeats dropped (the one backend known to loop)."""
        text = tidy(text)
        return drop_repeats(text) if self.config.llm == "local" else text

    def edge(self, source: str, target: str, type_: EdgeType, **props: Any) -> EdgeRecord:
        return edge(source, target, type_, self.session_id, **props)

    def agent_node(self, name: str, role: Role, perspective: str, level: int) -> AgentNode | None:
        """The session's Agent node for `name`, the first time it is needed."""
        node_id = self.agent_id(name)
        if node_id in self._agents:
            return None
        self._agents.add(node_id)
        return AgentNode(
            id=node_id, session=self.session_id, name=name, role=role, perspective=perspective, level=level
        )

    def plays(self, seat: AgentNode) -> list[EdgeRecord]:
        """The seat's PLAYS edge to its persona, when it plays one of the pool's perspectives."""
        if seat.perspective not in self.memory:
            return []
        return [self.edge(seat.id, persona_id(seat.perspective), EdgeType.PLAYS)]

    def agent_id(self, name: str) -> str:
        return f"{self.session_id}/agent/{name}"

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        tracing.phase(phase)
        self.emit(PhaseChanged(phase=phase))

    def room_for_debates(self) -> int | None:
        """How many more debates fit under --max-nodes (None: no cap), estimated from the
        nodes per debate that has run, keeping room for those waiting to run and two
        nodes for a synthesis and the final."""
        cap = self.config.max_nodes
        if cap is None:
            return None
        waiting = len(self.waiting)
        per_debate = len(self.node_ids) / max(1, len(self.debates) - waiting)
        return max(0, int((cap - 2 - len(self.node_ids)) // max(1.0, per_debate)) - waiting)

    def can_branch(self) -> bool:
        """Whether a new branch may start: room under --max-nodes, and budget for one
        debate round (and one for each branch waiting to run) with the final integration
        still in reserve."""
        if self.room_for_debates() == 0:
            self.emit(NodeCapReached(nodes=len(self.node_ids)))
            return False
        rounds = 1 + len(self.waiting)
        return not self.llm.exhausted(reserve_calls=self.config.per_round_calls() * rounds + 1)

    def open_stubs(self) -> list[TensionNode]:
        """The open stubs of the committed debates."""
        stubs = (t for t in self.tensions.values() if t.status is TensionStatus.STUB)
        return [t for t in stubs if t.debate not in self.uncommitted]
