"""What a session works through: its settings, its id, the store, the metered LLM, the
embedder and where its events go."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dagmca import tracing
from dagmca.config import SessionConfig
from dagmca.debate.events import Event, EventSink, NoEvents
from dagmca.graph import EdgeRecord, EdgeType, edge
from dagmca.llm.metered import MeteredLLM
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore


@dataclass(eq=False)
class Handles:
    config: SessionConfig
    session_id: str
    # Writes are queued to the store's own thread; reads are awaited (`store.aread`).
    store: BackgroundStore
    llm: MeteredLLM
    embedder: Embedder
    events: EventSink = field(default_factory=NoEvents)

    def emit(self, event: Event) -> None:
        tracing.event(event.name, event.data, event.words)  # on the current span, when traced
        self.events.emit(event)

    def edge(self, source: str, target: str, type_: EdgeType, **props: Any) -> EdgeRecord:
        return edge(source, target, type_, self.session_id, **props)
