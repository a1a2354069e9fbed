"""Files beside the graph: mca_report.json per debate, final_state.json, metrics.json."""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.debate.outcomes import DebateOutcome, DecomposeOutcome, MCAOutcome, PeerOutcome
from dagmca.debate.state import SessionState
from dagmca.graph import DebateNode, DebateOrigin, FinalNode, Phase, SessionNode
from dagmca.metrics.session import contributions, round_sibling_similarity
from dagmca.reports import models as m


def write_json(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """Atomic: a reader never sees half a file, even if we are killed mid-write.
    `indent=None`: on one line, by the json module's C encoder (indenting takes its
    pure-Python one, five times slower)."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    path.parent.mkdir(parents=True, exist_ok=True)
    # a name of this write's own: two writers of one folder never replace each other's file
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def report_path(debate: DebateNode) -> str:
    """Where a debate's mca_report.json goes, relative to the session's folder."""
    if debate.origin is DebateOrigin.MAIN:
        return "mca_report.json"
    return f"debates/{safe_name(debate.id)}/mca_report.json"


def write_session(state: SessionState, out_dir: Path) -> None:
    """Every report of a session as it stands: one per debate that ran, the final
    state, and the metrics when they were measured."""
    for debate_id, outcome in state.graph.outcomes.items():
        debate = state.graph.debates[debate_id]
        write_json(out_dir / report_path(debate), debate_report(state.handles.config, debate, outcome))
    if state.graph.session is not None:
        write_json(out_dir / "final_state.json", final_state(state, state.graph.session, state.graph.final))
    if state.metrics is not None:
        write_json(out_dir / "metrics.json", state.metrics)


def debate_report(cfg: SessionConfig, debate: DebateNode, outcome: DebateOutcome) -> m.MCAReport:
    """The seed's mca_report format, for one debate, extended with the second-seed
    options (goal, satisfaction_map, signal_chain), the baseline's subtasks and the
    peer protocols' winner and tracker."""
    tree = cfg.tree()
    subtasks = outcome.subtasks if isinstance(outcome, DecomposeOutcome) else {}
    rounds: dict[int, dict[str, m.AgentRound]] = {}
    satisfaction: dict[int, dict[str, float]] = {}
    revisions: Counter[str] = Counter()
    laterals = 0
    loops: list[str] = []
    for t in outcome.turns:
        if t.phase is Phase.STRANGE_LOOP:
            loops.append(t.text)
            continue
        agents = rounds.setdefault(t.round, {})
        entry = agents.get(t.agent) or m.AgentRound(
            role=t.role, perspective=t.perspective, subtask=subtasks.get(t.agent)
        )
        agents[t.agent] = entry
        if t.phase in (Phase.RESPOND, Phase.OBSERVE, Phase.SYNTHESIZE, Phase.PRESENT):
            entry.response = t.text
        elif t.phase in (Phase.ANSWER, Phase.NEW_ANSWER):
            entry.response, entry.label = t.text, t.label
        elif t.phase is Phase.VOTE:
            entry.vote_for = t.vote_for
        elif t.phase is Phase.LATERAL:
            laterals += 1
            entry.lateral_response = t.text
            entry.revised = t.revised
            revisions[t.agent] += int(t.revised)
        elif t.phase is Phase.SIGNAL:
            entry.signal_sent = t.text
        elif t.phase is Phase.DECOMPOSE:
            entry.subtasks = [subtasks[c] for c in tree.agents[t.agent].children]
        elif t.phase is Phase.REFLECT and t.satisfaction is not None:
            entry.satisfaction = t.satisfaction
            entry.signal_up = None if t.signal_kind in (None, "none") else t.signal_kind
            satisfaction.setdefault(t.round, {})[t.agent] = t.satisfaction
    reports: list[m.RoundReport] = []
    said = contributions(outcome.turns)
    for number, agents in sorted(rounds.items()):
        for name, entry in agents.items():
            parent = tree.agents[name].parent if name in tree.agents else None
            if parent is not None and parent in agents:
                entry.signal_received = agents[parent].signal_sent
        reports.append(
            m.RoundReport(
                round=number,
                agents=dict(sorted(agents.items())),
                convergence_score=outcome.scores[number - 2]
                if 2 <= number <= len(outcome.scores) + 1
                else None,
                mean_sibling_similarity=round_sibling_similarity(tree, said.get(number, {})),
            )
        )
    mca = outcome if isinstance(outcome, MCAOutcome) else None
    peers = outcome if isinstance(outcome, PeerOutcome) else None
    return m.MCAReport(
        debate=debate.id,
        protocol=outcome.protocol,
        task=debate.question,
        config=cfg,
        goal=(mca.goal if mca else "") or None,
        rounds=reports,
        convergence=m.Convergence(
            converged=outcome.converged, rounds_used=outcome.rounds, score_trajectory=outcome.scores
        ),
        summary_metrics=m.SummaryMetrics(
            total_llm_calls=outcome.calls,
            lateral_revision_rate=round(sum(revisions.values()) / laterals, 4) if laterals else 0.0,
            per_agent_revision_counts=dict(sorted(revisions.items())),
            mean_sibling_similarity=[
                r.mean_sibling_similarity for r in reports if r.mean_sibling_similarity is not None
            ],
            final_length_words=len(outcome.resolution.split()),
        ),
        strange_loops=loops,
        satisfaction_map=satisfaction,
        signal_chain=[m.SignalHop.model_validate(vars(e)) for e in (mca.signal_chain if mca else [])],
        winner=peers.winner if peers else None,
        tracker=[m.TrackerEvent.model_validate(vars(e)) for e in (peers.tracker if peers else [])],
        final_response=outcome.resolution,
    )


def final_state(state: SessionState, session: SessionNode, final: FinalNode | None) -> m.FinalState:
    return m.FinalState(
        session=session.id,
        title=session.title,
        status=session.status,
        final=final.text if final else None,
        debates=[
            m.DebateSummary(
                id=d.id,
                origin=d.origin.value,
                protocol=d.protocol,
                depth=d.depth,
                question=d.question,
                resolution=d.resolution,
                rounds=d.rounds,
                converged=d.converged,
                report=report_path(d) if d.rounds else None,
            )
            for d in state.graph.debates.values()
        ],
        syntheses=[
            m.SynthesisSummary(
                id=s.id,
                resolution=s.resolution,
                similarity=s.similarity,
                reason=s.reason,
                method=s.method.value,
                shared_claim=s.shared_claim,
            )
            for s in state.graph.syntheses.values()
        ],
        tensions=[
            m.TensionSummary(
                id=t.id, question=t.question, urgency=t.urgency, status=t.status.value, observer=t.observer
            )
            for t in state.graph.tensions.values()
        ],
        llm_calls=session.llm_calls,
        tokens=session.tokens,
        cost_usd=session.cost_usd,
    )


def safe_name(node_id: str) -> str:
    return node_id.split("/", 1)[-1].replace("/", "_") or "main"
