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
from dagmca.debate.state import SessionState
from dagmca.models import DebateNode, DebateOrigin, EdgeType, FinalNode, SessionNode, utcnow
from dagmca.prompts.templates import MAIN_QUESTION


@dataclass
class SessionResult:
    session: SessionNode
    final: FinalNode | None
    out_dir: Path


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

    def save_status() -> None:
        reports.write_json(out_dir / "status.json", reports.status(state, session))

    save_status()
    try:
        state.set_phase("main debate")
        save_status()
        await runner.run_debate(main)
        state.set_phase("branches")
        save_status()
        await runner.explore(main)
        state.set_phase("final integration")
        save_status()
        final = await integrate(runner, main)
        session.status = "budget_exhausted" if state.llm.exhausted() else "done"
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.status = "interrupted"
        raise
    except BaseException:
        session.status = "failed"
        raise
    finally:
        m = state.llm.meter
        session.finished_at = utcnow()
        session.llm_calls = m.calls
        session.tokens = m.usage.total
        session.cost_usd = round(m.cost_usd, 6)
        state.write([session])
        state.set_phase(session.status)
        save_status()
        for debate_id, outcome in runner.outcomes.items():
            debate = state.debates[debate_id]
            report = reports.debate_report(state, debate, outcome)
            name = (
                "mca_report.json"
                if debate.origin is DebateOrigin.MAIN
                else f"debates/{reports.safe_name(debate_id)}/mca_report.json"
            )
            reports.write_json(out_dir / name, report)
        reports.write_json(out_dir / "final_state.json", reports.final_state(state, session, final))
    return SessionResult(session=session, final=final, out_dir=out_dir)
