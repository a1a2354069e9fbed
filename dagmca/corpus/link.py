"""Across passages: after a passage's session, the open stubs of the
store's earlier sessions are judged against the passage. An answered stub is
superseded by the passage's Session node (with the answering sentence); a relevant one
is explored as a revisit branch in its own session with the new passage as context,
within the build's cap, and that branch `REFERENCES` the passage's main debate; every
check is a `CHECKED_AGAINST` relationship to the passage's Session node."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.corpus.sources import Passage
from dagmca.debate.events import EventSink
from dagmca.graph import (
    PERSONA_SESSION,
    EdgeType,
    NodeKind,
    NodeRecord,
    SessionNode,
    SessionStatus,
    TensionStatus,
    node_from_record,
    utcnow,
)
from dagmca.llm.factory import Backend
from dagmca.llm.metered import MeteredLLM
from dagmca.store.background import BackgroundStore
from dagmca.store.lease import Claims
from dagmca.workspace import BaseWorkspace, Handed
from dagmca.workspace.session import OpenSession, SessionMode, SharedResources, revisit_and_report

LINK_CLAIM = "_link"  # the claim a worker holds while it changes other sessions
DOWN_FIX = "every finished turn is kept; run the same build again"


@dataclass(frozen=True)
class BuildSessions:
    """How a build opens its sessions: the workspace's lifecycle, on the build's one
    backend, concurrency limit and spend, under the build's claims (a passage's for its
    own session, the link claim for the earlier sessions it links)."""

    ws: BaseWorkspace
    backend: Backend | Handed
    shared: SharedResources
    claims: Claims

    @property
    def store(self) -> BackgroundStore:
        return self.shared.store

    def open(
        self, cfg: SessionConfig, session_id: str, passage: str, mode: SessionMode, events: EventSink
    ) -> AbstractAsyncContextManager[OpenSession]:
        return self.ws.open_session(
            cfg,
            session_id=session_id,
            passage=passage,
            mode=mode,
            events=events,
            backend=self.backend,
            shared=self.shared,
            fix_when_down=DOWN_FIX,
            lease=self.claims,
        )


@dataclass(frozen=True)
class Link:
    """One cross-passage relation the build made."""

    kind: str  # "answered" (a stub superseded) or "revisited" (a revisit branch)
    passage: str  # the session of the new passage
    session: str  # the earlier session
    node: str  # the stub answered, or the revisit branch started


@dataclass(frozen=True)
class Step:
    """One earlier session's open stubs judged against one new passage."""

    passage: Passage
    against: SessionNode  # the new passage's Session node
    other: NodeRecord  # the earlier session
    cfg: SessionConfig  # its own settings, with the revisit branches it was offered


@dataclass
class StepResult:
    links: list[Link]
    revisits: int = 0
    checked: int = 0


def finished_others(sessions: list[NodeRecord], p: Passage, skip: set[str]) -> list[NodeRecord]:
    """The sessions whose open stubs a new passage is judged against: every finished one
    in the store but its own and `skip` (the build's later passages), oldest first."""
    return [
        s
        for s in sessions
        if s.id not in skip | {p.id} and s.session != PERSONA_SESSION and SessionStatus.of(s).ended()
    ]


async def link_step(
    step: Step,
    sessions: BuildSessions,
    *,
    reports: Callable[[str], Path],
    events: EventSink,
    meters: list[MeteredLLM],
) -> StepResult:
    """Judge the earlier session's open stubs against the passage (as `revisit` does):
    answered ones superseded by the passage's Session node, relevant ones explored as
    revisit branches (as many as it was offered) that `REFERENCES` the passage's main
    debate; a session with no open stub is not opened."""
    p, other = step.passage, step.other
    tensions = await sessions.store.aread(lambda s: s.nodes(other.id, NodeKind.TENSION))
    if not any(t.props.get("status") == TensionStatus.STUB.value for t in tensions):
        return StepResult([])
    async with sessions.open(step.cfg, other.id, p.text, SessionMode.REVISIT, events) as opened:
        state = opened.state
        meters.append(state.handles.llm)
        result = await revisit_and_report(
            state, context=p.text, out_dir=reports(other.id), against=step.against
        )
        references = [
            state.handles.edge(
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
    return StepResult(links, state.counts.revisits_used, result.checked)


async def mark_linked(sessions: BuildSessions, against: SessionNode, p: Passage) -> None:
    """The passage is finished: every earlier session was judged against it. Read again
    first: the Session node may have changed since the link began."""
    record = await sessions.store.aread(lambda s: s.get_node(against.id))
    node = node_from_record(record) if record is not None else against
    if not isinstance(node, SessionNode):
        raise ValueError(f"{against.id} is not a session")
    node.source = p.source
    node.linked_at = utcnow()
    sessions.store.write([node.to_record()])
