"""One session, phase by phase (DESIGN §1)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from dagmca.debate import reports
from dagmca.debate.dag import DagRunner
from dagmca.debate.integrator import integrate
from dagmca.debate.live import LiveStatus
from dagmca.debate.state import SessionState
from dagmca.metrics.session import SessionMetrics, session_metrics
from dagmca.models import (
    DebateNode,
    DebateOrigin,
    EdgeType,
    FinalNode,
    SessionNode,
    TensionStatus,
    node_from_record,
    utcnow,
)
from dagmca.prompts.templates import MAIN_QUESTION


@dataclass
class SessionResult:
    session: SessionNode
    final: FinalNode | None
    out_dir: Path


def _add_up_calls(state: SessionState, session: SessionNode) -> None:
    """Totals over every run of the session (resumed and revisited ones included), from
    the call records; calls answered from the cache cost nothing."""
    spent = [c for c in state.store.calls(state.session_id) if not c.cache_hit]
    session.llm_calls = len(spent)
    session.tokens = sum(c.prompt_tokens + c.completion_tokens for c in spent)
    session.cost_usd = round(sum(c.cost_usd for c in spent), 6)


async def run_session(state: SessionState, *, title: str, model: str, out_dir: Path) -> SessionResult:
    cfg = state.config
    session = SessionNode(
        id=state.session_id,
        session=state.session_id,
        passage=state.passage,
        passage_sha256=hashlib.sha256(state.passage.encode()).hexdigest(),
        title=title,
        config=json.dumps(cfg.model_dump(mode="json"), sort_keys=True),
        model=model,
    )
    earlier = state.store.get_node(state.session_id)
    if earlier is not None:  # a resumed session keeps when it first started
        session.started_at = str(earlier.props.get("started_at", session.started_at))
    main = DebateNode(
        id=f"{state.session_id}/main",
        session=state.session_id,
        origin=DebateOrigin.MAIN,
        question=MAIN_QUESTION,
        depth=0,
    )
    state.write([session, main], [state.edge(main.id, session.id, EdgeType.IN_SESSION)])
    runner = DagRunner(state)
    final: FinalNode | None = None

    live = LiveStatus(state, session, out_dir, state.events)
    state.events = live  # every event is logged and moves status.json, then shown
    live.write()
    try:
        state.set_phase("main debate")
        await runner.run_debate(main)
        runner.credit(main)
        state.set_phase("branches")
        await runner.explore(main)
        state.set_phase("final integration")
        final = await integrate(runner, main)
        session.status = "budget_exhausted" if state.llm.budget_hit else "done"
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.status = "interrupted"
        raise
    except BaseException:
        session.status = "failed"
        raise
    finally:
        session.finished_at = utcnow()
        _add_up_calls(state, session)
        state.write([session])
        state.set_phase(session.status)
        for debate_id, outcome in runner.outcomes.items():
            debate = state.debates[debate_id]
            report = reports.debate_report(state, debate, outcome)
            reports.write_json(out_dir / reports.report_path(debate), report)
        reports.write_json(out_dir / "final_state.json", reports.final_state(state, session, final))
        record_metrics(state, session, out_dir)
        live.close()
        state.events = live.inner
    return SessionResult(session=session, final=final, out_dir=out_dir)


def record_metrics(state: SessionState, session: SessionNode, out_dir: Path) -> SessionMetrics | None:
    """The emergence metrics, on the Session and Debate nodes and in metrics.json.
    Measuring never costs the run: a failure here is reported and the run stands."""
    try:
        m = session_metrics(state.store, state.session_id, state.embedder)
    except Exception as exc:  # a metric must never lose a finished run
        state.events.emit("metrics_failed", error=str(exc))
        return None
    session.specialization = m.specialization
    session.context_divergence = m.context_divergence
    session.differentiation_chi2 = m.differentiation_chi2
    session.differentiation_p = m.differentiation_p
    session.cost_per_node = m.cost_per_node
    debates = []
    for d in m.debates:
        node = state.debates.get(d.debate)
        if node is None:
            continue
        node.revision_rate = d.lateral_revision_rate
        node.sibling_similarity = d.sibling_similarity[-1] if d.sibling_similarity else None
        node.collapse_alarm = d.collapse_alarm
        node.bloat_alarm = d.bloat_alarm
        node.root_novelty = d.root_novelty
        debates.append(node)
    state.write([session, *debates])
    reports.write_json(out_dir / "metrics.json", m)
    return m


@dataclass
class RevisitResult:
    checked: int
    superseded: list[str]
    explored: list[str]  # ids of the new revisit branches
    final: FinalNode | None


async def revisit_session(state: SessionState, *, context: str, out_dir: Path) -> RevisitResult:
    """Later, with new context (a new passage, or the session's own final answer):
    check the session's open stubs against it, explore the relevant ones as revisit
    branches in the same DAG, and integrate again (DESIGN §1, `dagmca revisit`)."""
    session_record = state.store.get_node(state.session_id)
    if session_record is None:
        raise ValueError(f"no session {state.session_id}")
    session = node_from_record(session_record)
    assert isinstance(session, SessionNode)
    nodes = [node_from_record(r) for r in state.store.nodes(state.session_id)]
    state.track(nodes)
    final = next((n for n in nodes if isinstance(n, FinalNode)), None)
    main = state.debates[f"{state.session_id}/main"]
    runner = DagRunner(state)
    before = {t.id: t.status for t in state.open_stubs()}
    state.set_phase("revisiting stubs")
    await runner.revisit(final or session, context)
    superseded = [i for i in before if state.tensions[i].status is TensionStatus.SUPERSEDED]
    explored = [d for d in runner.outcomes if state.debates[d].origin is DebateOrigin.REVISIT]
    if explored or superseded or final is None:
        state.set_phase("final integration")
        final = await integrate(runner, main)
    _add_up_calls(state, session)
    session.finished_at = utcnow()
    state.write([session])
    reports.write_json(out_dir / "final_state.json", reports.final_state(state, session, final))
    record_metrics(state, session, out_dir)  # the revisit branches count too
    return RevisitResult(checked=len(before), superseded=superseded, explored=explored, final=final)
