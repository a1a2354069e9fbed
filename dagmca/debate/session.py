"""One session, phase by phase: the main debate, its branches, the final
integration, the metrics; and a later revisit of its open stubs."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass

from dagmca import tracing
from dagmca.debate.dag import personas, sections
from dagmca.debate.dag.explore import Explorer
from dagmca.debate.dag.integrator import integrate
from dagmca.debate.events import MetricsFailed
from dagmca.debate.ledger import ControlTrace, LedgerResult, trace, trace_control
from dagmca.debate.state import SessionState
from dagmca.debate.state.counts import Counts
from dagmca.graph import (
    DebateNode,
    DebateOrigin,
    EdgeType,
    FinalNode,
    GraphNode,
    SectionNode,
    SessionNode,
    SessionStatus,
    TensionStatus,
    node_from_record,
    utcnow,
)
from dagmca.graph.calls import spent
from dagmca.metrics.session import SessionMetrics, role_usage, session_metrics
from dagmca.prompts.templates import MAIN_QUESTION
from dagmca.prompts.version import PROMPT_VERSION
from dagmca.similarity.counts import EmbedCounts, counting


@dataclass
class SessionResult:
    session: SessionNode
    final: FinalNode | None


async def _add_up_calls(state: SessionState, session: SessionNode) -> None:
    """Totals over every run of the session (resumed and revisited ones included), from
    the call records; calls answered from the cache cost nothing."""
    records = await state.handles.store.aread(lambda s: s.calls(state.handles.session_id))
    session.llm_calls, session.tokens, cost = spent(records)
    session.cost_usd = round(cost, 6)
    session.omitted_chars = sum(c.omitted_chars for c in records)
    session.reasks = len({c.key for c in records if c.reask})  # once each, however often replayed
    session.role_calls = json.dumps([u.model_dump() for u in role_usage(records)])


def _add_up_embedding(counts: Counts, session: SessionNode, earlier: str | None) -> None:
    """The embedding counts of every run of the session: `earlier`'s (JSON) and this run's."""
    total = EmbedCounts.model_validate_json(earlier) if earlier else EmbedCounts()
    session.embedding = total.merged(counts.embed_counts).model_dump_json()


def _fitting(state: SessionState, session: SessionNode) -> None:
    """How the session fitted the model, on its Session node."""
    session.context_window = state.prompts.window.tokens
    session.context_window_source = state.prompts.window.source
    session.tokenizer = state.prompts.budget.counter.describe()
    session.structured_output = state.handles.llm.structured_mode
    session.passage_tokens = state.prompts.passage_tokens
    session.passage_mode = "sections" if state.prompts.passage_mode == "sections" else "whole"


def _problems(counts: Counts) -> list[str]:
    """What went wrong as a whole, though the run went to its end."""
    if counts.flag_calls and counts.flag_failures == counts.flag_calls:
        return [
            f"every observer call failed ({counts.flag_calls} of {counts.flag_calls}): no tension could be "
            "flagged, so nothing branched; see the failed calls' errors (`dagmca status` or the call records)"
        ]
    return []


async def run_session(state: SessionState, *, title: str, model: str) -> SessionResult:
    with counting(state.counts.embed_counts):  # this session's tasks count their embedding
        return await _run_session(state, title=title, model=model)


async def _run_session(state: SessionState, *, title: str, model: str) -> SessionResult:
    from dagmca.llm.factory import role_models

    cfg = state.handles.config
    session = SessionNode(
        id=state.handles.session_id,
        session=state.handles.session_id,
        passage=state.passage,
        passage_sha256=hashlib.sha256(state.passage.encode()).hexdigest(),
        title=title,
        config=json.dumps(cfg.model_dump(mode="json"), sort_keys=True),
        model=model,
        question=state.question,
        role_models=json.dumps({r.value: m for r, m in role_models(cfg, model).items()}, sort_keys=True),
        prompt_version=PROMPT_VERSION,
        trace_id=tracing.trace_id(),
        backend=cfg.llm,
        protocol=cfg.protocol,
        cpp=cfg.cpp,
        depth=cfg.depth,
        rounds=cfg.rounds,
        strategy=cfg.strategy,
        router=cfg.router,
        seed=cfg.seed,
    )
    earlier = await state.handles.store.aread(lambda s: s.get_node(state.handles.session_id))
    embedded_before: str | None = None
    if earlier is not None:  # a resumed session keeps when it first started
        session.started_at = str(earlier.props.get("started_at", session.started_at))
        found = earlier.props.get("embedding")
        embedded_before = found if isinstance(found, str) else None
    state.graph.session = session
    await personas.load(state, session, earlier.props if earlier is not None else None)
    main = DebateNode(
        id=f"{state.handles.session_id}/main",
        session=state.handles.session_id,
        origin=DebateOrigin.MAIN,
        question=state.question or MAIN_QUESTION,
        depth=0,
    )
    state.write([session, main], [state.handles.edge(main.id, session.id, EdgeType.IN_SESSION)])
    explorer = Explorer(state)
    final: FinalNode | None = None
    try:
        state.set_phase("reading the passage")
        await sections.prepare(state)
        _fitting(state, session)
        state.write([session])
        state.set_phase("main debate")
        await explorer.run_debate(main)
        await explorer.credit(main)
        state.set_phase("branches")
        await explorer.explore(main)
        state.set_phase("final integration")
        final = await integrate(state, main)
        await state.settle()
        await _ledger(state)
        session.problems = _problems(state.counts)
        session.status = (
            SessionStatus.BUDGET_EXHAUSTED
            if state.handles.llm.budget_hit
            else SessionStatus.DEGRADED
            if session.problems
            else SessionStatus.DONE
        )
        await personas.save(state)
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.status = SessionStatus.INTERRUPTED
        raise
    except BaseException:
        session.status = SessionStatus.FAILED
        raise
    finally:
        state.abandon()
        session.finished_at = utcnow()
        session.dropped_tensions = state.counts.dropped_tensions
        await _add_up_calls(state, session)
        _add_up_embedding(state.counts, session, embedded_before)
        state.write([session])
        state.set_phase(session.status)
        await record_metrics(state, session)
    return SessionResult(session=session, final=final)


async def record_metrics(state: SessionState, session: SessionNode) -> SessionMetrics | None:
    """The emergence metrics, onto the Session and Debate nodes (and `state.metrics`).
    Computed on the store's thread, after every write of the run. Measuring never
    costs the run: a failure here is reported and the run stands."""
    try:
        m = await state.handles.store.aread(
            lambda s: session_metrics(s, state.handles.session_id, state.handles.embedder)
        )
    except Exception as exc:  # a metric must never lose a finished run
        state.handles.emit(MetricsFailed(error=str(exc)))
        return None
    session.specialization = m.specialization
    session.context_divergence = m.context_divergence
    session.differentiation_chi2 = m.differentiation_chi2
    session.differentiation_p = m.differentiation_p
    session.cost_per_node = m.cost_per_node
    debates = []
    for d in m.debates:
        node = state.graph.debates.get(d.debate)
        if node is None:
            continue
        node.revision_rate = d.lateral_revision_rate
        node.sibling_similarity = d.sibling_similarity[-1] if d.sibling_similarity else None
        node.collapse_alarm = d.collapse_alarm
        node.bloat_alarm = d.bloat_alarm
        node.similarity_novelty = d.similarity_novelty
        debates.append(node)
    state.write([session, *debates])
    state.metrics = m
    return m


@dataclass
class RevisitOutcome:
    """What a revisit did to the graph: the open stubs judged, those found answered
    (superseded), the new branches' ids and the final integrated again (None when
    nothing changed). The workspace returns it as a `RevisitResult`, with its spend."""

    checked: int
    superseded: list[str]
    explored: list[str]  # ids of the new revisit branches
    final: FinalNode | None


async def revisit_session(
    state: SessionState, *, context: str, against: GraphNode | None = None
) -> RevisitOutcome:
    """Later, with new context (a new passage, or the session's own final answer):
    check the session's open stubs against it, explore the relevant ones as revisit
    branches in the same DAG, and integrate again (`dagmca revisit`).
    `against`: the node the checks name (and that supersedes what it answers) — by
    default the session's final; in a build, another session's node, against which a
    stub is checked once: a rerun after a kill judges only the stubs not yet checked
    against it (a check is keyed by its place in the stub's list, so none is moved)."""
    with counting(state.counts.embed_counts):
        return await _revisit_session(state, context=context, against=against)


async def _revisit_session(state: SessionState, *, context: str, against: GraphNode | None) -> RevisitOutcome:
    records = await state.handles.store.aread(lambda s: s.nodes(state.handles.session_id))
    nodes = [node_from_record(r) for r in records]
    session = next((n for n in nodes if isinstance(n, SessionNode)), None)
    if session is None:
        raise ValueError(f"no session {state.handles.session_id}")
    state.graph.session = session
    session.trace_id = tracing.trace_id() or session.trace_id
    state.graph.track(nodes)
    # the pairs judged to contradict: the final integrated again gives them, as the run did
    contradicts = await state.handles.store.aread(
        lambda s: s.edges(state.handles.session_id, EdgeType.CONTRADICTS)
    )
    state.graph.track_contradictions(contradicts)
    state.prompts.sections = sorted((n for n in nodes if isinstance(n, SectionNode)), key=lambda s: s.number)
    await sections.prepare(state)
    final = next((n for n in nodes if isinstance(n, FinalNode)), None)
    state.graph.final = final
    main = state.graph.debates[f"{state.handles.session_id}/main"]
    explorer = Explorer(state)
    by = against or final or session
    before = {t.id: t.status for t in state.graph.open_stubs()}
    state.set_phase("revisiting stubs")
    await explorer.revisit(by, context, once=against is not None)
    superseded = [i for i in before if state.graph.tensions[i].status is TensionStatus.SUPERSEDED]
    explored = [d for d in state.graph.outcomes if state.graph.debates[d].origin is DebateOrigin.REVISIT]
    if explored or superseded or final is None:
        state.set_phase("final integration")
        final = await integrate(state, main)
    await state.settle()
    await _ledger(state)  # a final integrated again has new claims to trace
    await _add_up_calls(state, session)
    _add_up_embedding(state.counts, session, session.embedding)
    session.dropped_tensions += state.counts.dropped_tensions
    session.finished_at = utcnow()
    state.write([session])
    await record_metrics(state, session)  # the revisit branches count too
    return RevisitOutcome(checked=len(before), superseded=superseded, explored=explored, final=final)


async def _ledger(state: SessionState) -> LedgerResult:
    """The emergence ledger, as --ledger asks (nothing when off). A run its budget already
    stopped is not traced: what the budget left after the final answer would trace a
    part of it, and a part's shares would pass for the whole. Resumed with a raised
    budget, or `dagmca ledger` with one, traces it."""
    if state.handles.config.ledger_mode() == "off" or state.handles.llm.budget_hit:
        return LedgerResult()
    state.set_phase("emergence ledger")
    return await trace(state)


async def ledger_session(state: SessionState) -> LedgerResult:
    """Trace a stored session's claims (`dagmca ledger`), also one made before the ledger
    existed: what is already traced is kept, the rest asked; the session's totals and
    metrics then count it."""
    with counting(state.counts.embed_counts):
        return await _ledger_session(state)


async def _loaded(state: SessionState) -> SessionNode:
    """A stored session's graph loaded into `state`, its sections ready: what a ledger
    call's prompt is built from."""
    records = await state.handles.store.aread(lambda s: s.nodes(state.handles.session_id))
    nodes = [node_from_record(r) for r in records]
    session = next((n for n in nodes if isinstance(n, SessionNode)), None)
    if session is None:
        raise ValueError(f"no session {state.handles.session_id}")
    state.graph.session = session
    state.graph.track(nodes)
    state.prompts.sections = sorted((n for n in nodes if isinstance(n, SectionNode)), key=lambda s: s.number)
    await sections.prepare(state)
    state.graph.final = next((n for n in nodes if isinstance(n, FinalNode)), None)
    return session


async def _ledger_session(state: SessionState) -> LedgerResult:
    session = await _loaded(state)
    result = await _ledger(state)
    await _add_up_calls(state, session)
    _add_up_embedding(state.counts, session, session.embedding)
    state.write([session])
    await record_metrics(state, session)
    return result


async def control_session(state: SessionState, against: str) -> ControlTrace:
    """The ledger's control: a stored session's final (a lone agent's) traced against
    session `against`'s passage and texts, writing no claim; the session's totals then
    count the calls it made (recorded under its id, as the control's text)."""
    session = await _loaded(state)
    with counting(state.counts.embed_counts):
        traced = await trace_control(state, against)
    await _add_up_calls(state, session)
    _add_up_embedding(state.counts, session, session.embedding)
    state.write([session])
    return traced
