"""Files beside the graph: status.json (live), final_state.json, mca_report.json per debate."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from dagmca.debate.engine import DebateOutcome
from dagmca.debate.state import SessionState
from dagmca.models import DebateNode, FinalNode, Phase, SessionNode, utcnow


def write_json(path: Path, data: Any) -> None:
    """Atomic: a reader never sees half a file, even if we are killed mid-write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def status(state: SessionState, session: SessionNode) -> dict[str, Any]:
    m = state.llm.meter
    nodes = Counter(n.kind.value for n in state.store.nodes(state.session_id))
    return {
        "session": state.session_id,
        "status": session.status,
        "phase": state.phase,
        "updated_at": utcnow(),
        "nodes": dict(sorted(nodes.items())),
        "llm_calls": m.calls,
        "llm_failures": m.failures,
        "tokens": m.usage.total,
        "cost_usd": round(m.cost_usd, 6),
    }


def debate_report(state: SessionState, debate: DebateNode, outcome: DebateOutcome) -> dict[str, Any]:
    """The seed's mca_report format, for one debate."""
    rounds: dict[int, dict[str, dict[str, Any]]] = {}
    revisions: Counter[str] = Counter()
    laterals = 0
    for t in outcome.turns:
        entry = rounds.setdefault(t.round, {}).setdefault(
            t.agent,
            {
                "role": t.role.value,
                "perspective": t.perspective,
                "response": "",
                "lateral_response": None,
                "revised": False,
                "signal_sent": None,
                "signal_received": None,
            },
        )
        if t.phase in (Phase.RESPOND, Phase.OBSERVE):
            entry["response"] = t.text
        elif t.phase is Phase.LATERAL:
            laterals += 1
            entry["lateral_response"] = t.text
            entry["revised"] = t.revised
            revisions[t.agent] += int(t.revised)
        elif t.phase is Phase.SIGNAL:
            entry["signal_sent"] = t.text
        elif t.phase is Phase.STRANGE_LOOP:
            entry.setdefault("strange_loop", []).append(t.text)
    return {
        "debate": debate.id,
        "question": debate.question,
        "config": state.config.model_dump(mode="json"),
        "rounds": [{"round": n, "agents": agents} for n, agents in sorted(rounds.items())],
        "convergence": {
            "converged": outcome.converged,
            "rounds_used": outcome.rounds,
            "score_trajectory": outcome.scores,
        },
        "summary_metrics": {
            "total_llm_calls": len(outcome.turns),
            "lateral_revision_rate": round(sum(revisions.values()) / laterals, 4) if laterals else 0.0,
            "per_agent_revision_counts": dict(sorted(revisions.items())),
        },
        "final_response": outcome.resolution,
    }


def final_state(state: SessionState, session: SessionNode, final: FinalNode | None) -> dict[str, Any]:
    return {
        "session": session.id,
        "title": session.title,
        "status": session.status,
        "final": final.text if final else None,
        "debates": [
            {
                "id": d.id,
                "origin": d.origin.value,
                "depth": d.depth,
                "question": d.question,
                "resolution": d.resolution,
                "rounds": d.rounds,
                "converged": d.converged,
            }
            for d in state.debates.values()
        ],
        "syntheses": [
            # the reason states the similarity against the run's own baseline
            {"id": s.id, "resolution": s.resolution, "similarity": s.similarity, "reason": s.reason}
            for s in state.syntheses.values()
        ],
        "tensions": [
            {
                "id": t.id,
                "question": t.question,
                "urgency": t.urgency,
                "status": t.status.value,
                "observer": t.observer,
            }
            for t in state.tensions.values()
        ],
        "llm_calls": session.llm_calls,
        "tokens": session.tokens,
        "cost_usd": session.cost_usd,
    }


def safe_name(node_id: str) -> str:
    return node_id.split("/", 1)[-1].replace("/", "_") or "main"
