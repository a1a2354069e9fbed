"""Final integration: the root integrator reads the whole graph (DESIGN §1.9)."""

from __future__ import annotations

from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta
from dagmca.models import CallPhase, DebateNode, DebateOrigin, EdgeType, FinalNode, GraphNode, TensionNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.text import tidy


async def integrate(state: SessionState, main: DebateNode) -> FinalNode:
    st, cfg = state, state.config
    used: list[GraphNode] = [main]
    sections = [("Main debate resolution", main.resolution or "(none)")]
    for d in st.debates.values():
        if d.origin is not DebateOrigin.MAIN and d.resolution:
            used.append(d)
            sections.append((f"Branch (depth {d.depth}) on: {d.question}", d.resolution))
    for s in st.syntheses.values():
        used.append(s)
        sections.append(("Synthesis of converging branches", s.resolution))
    for later, earlier, reason in st.contradictions:
        sections.append((f"Unreconciled: '{earlier.question}' versus '{later.question}'", reason))
    stubs: list[TensionNode] = sorted(st.open_stubs(), key=lambda t: (-t.urgency, t.id))[: cfg.final_stubs]
    for t in stubs:
        used.append(t)
        sections.append((f"Open question (urgency {t.urgency:.2f})", t.question))
    messages = tpl.integrate(st.frame(main.question)(), sections)
    meta = CallMeta(agent="root-integrator", debate=main.id, phase=CallPhase.FINAL)
    done = await st.ask(messages, max_tokens=cfg.turn_tokens() * 3, meta=meta)
    # Degrade: without the call, the main resolution stands as the final text, and says why.
    text = tidy(done.text) if done is not None else f"(final integration failed) {main.resolution}"
    final = FinalNode(id=f"{st.session_id}/final", session=st.session_id, text=text)
    st.write([final], [st.edge(final.id, n.id, EdgeType.INTEGRATES) for n in used])
    st.final = final
    return final
