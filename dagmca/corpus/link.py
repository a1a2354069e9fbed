"""Across passages (DESIGN §11): after a passage's session, the open stubs of the
store's earlier sessions are judged against the passage. An answered stub is
superseded by the passage's Session node (with the answering sentence); a relevant one
is explored as a revisit branch in its own session with the new passage as context,
within the build's cap, and that branch `REFERENCES` the passage's main debate; every
check is a `CHECKED_AGAINST` relationship to the passage's Session node."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.corpus.sources import Passage
from dagmca.debate.events import EventSink
from dagmca.llm.base import LLMClient
from dagmca.llm.metered import MeteredLLM
from dagmca.models import (
    PERSONA_SESSION,
    EdgeType,
    NodeKind,
    NodeRecord,
    SessionNode,
    TensionStatus,
    node_from_record,
    utcnow,
)
from dagmca.runner import Shared, open_state, revisit_and_report, stored_config
from dagmca.similarity import Embedder
from dagmca.store.base import GraphStore

LINK_CLAIM = "_link"  # the claim a worker holds while it changes other sessions
FINISHED = frozenset({"done", "degraded", "budget_exhausted"})


@dataclass(frozen=True)
class Link:
    """One cross-passage relation the build made."""

    kind: str  # "answered" (a stub superseded) or "revisited" (a revisit branch)
    passage: str  # the session of the new passage
    session: str  # the earlier session
    node: str  # the stub answered, or the revisit branch started


async def link_passage(
    p: Passage,
    store: GraphStore,
    shared: Shared,
    *,
    client: LLMClient,
    embedder: Embedder,
    skip: set[str],
    revisits: int,
    reports: Callable[[str], Path],
    events: EventSink,
    meters: list[MeteredLLM],
) -> tuple[list[Link], int, int]:
    """Judge the open stubs of every finished session but `p`'s and those in `skip`
    (the build's later passages) against `p`; at most `revisits` revisit branches in
    all. Returns the links made, the revisit branches used and the stubs checked; marks
    `p` linked."""
    bg = shared.store
    record = await bg.aread(lambda s: s.get_node(p.id))
    if record is None:
        raise ValueError(f"no session {p.id} to link")
    passage_node = node_from_record(record)
    assert isinstance(passage_node, SessionNode)
    others = [
        s
        for s in await bg.aread(lambda s: s.sessions())
        if s.id not in skip
        and s.id != p.id
        and s.session != PERSONA_SESSION
        and s.props.get("status") in FINISHED
    ]
    # The build's revisit branches are handed out before any check, in session order, so
    # the sessions can be judged at once and the graph still not depend on which
    # finishes first; what a session leaves unused returns to the build's cap.
    todo: list[tuple[NodeRecord, SessionConfig]] = []
    left = revisits
    for other in others:
        tensions = await bg.aread(lambda s, o=other.id: s.nodes(o, NodeKind.TENSION))  # type: ignore[misc]
        if not any(t.props.get("status") == TensionStatus.STUB.value for t in tensions):
            continue
        base = stored_config(other)
        allotted = min(base.max_revisits, left)
        left -= allotted
        todo.append((other, base.model_copy(update={"max_revisits": allotted})))

    async def one(other: NodeRecord, cfg: SessionConfig) -> tuple[list[Link], int, int]:
        async with open_state(
            cfg,
            store,
            client=client,
            session_id=other.id,
            passage=p.text,
            embedder=embedder,
            events=events,
            earlier="charge",
            shared=shared,
        ) as state:
            meters.append(state.llm)
            result = await revisit_and_report(
                state, context=p.text, out_dir=reports(other.id), against=passage_node
            )
            references = [
                state.edge(
                    branch,
                    f"{p.id}/main",
                    EdgeType.REFERENCES,
                    key=f"passage:{p.id}",
                    reason=f"explored with the passage of session {p.id} as new context",
                )
                for branch in result.explored
            ]
            if references:
                state.write([], references)
        links = [Link("answered", p.id, other.id, stub) for stub in result.superseded]
        links += [Link("revisited", p.id, other.id, branch) for branch in result.explored]
        return links, state.revisits_used, result.checked

    done = await asyncio.gather(*(one(other, cfg) for other, cfg in todo))
    links = [link for made, _, _ in done for link in made]
    used = sum(u for _, u, _ in done)
    checked = sum(c for _, _, c in done)
    passage_node.source = p.source
    passage_node.linked_at = utcnow()
    bg.write([passage_node.to_record()])
    return links, used, checked
