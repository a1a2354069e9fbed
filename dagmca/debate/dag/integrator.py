"""Final integration: the root integrator reads the whole graph, every
resolution, synthesis and open question whole. When they do not fit one prompt it
integrates hierarchically: groups that fit first, each group's integration a recorded
`Integration` node, then those (again in groups if they must be)."""

from __future__ import annotations

import asyncio

from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta
from dagmca.models import (
    CallPhase,
    DebateNode,
    DebateOrigin,
    EdgeType,
    FinalNode,
    GraphNode,
    IntegrationNode,
    TensionNode,
)
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import pieces

Section = tuple[str, str, GraphNode | None]  # label, text, the node it stands for
MAX_LEVELS = 4


def _sections(state: SessionState, main: DebateNode) -> list[Section]:
    st, cfg = state, state.config
    # degenerate texts (loops, echoes of a prompt) are in the graph, not in the answer
    sound = main.resolution if main.resolution and not main.degenerate else "(none)"
    out: list[Section] = [("Main debate resolution", sound, main)]
    for d in st.debates.values():
        if d.origin is not DebateOrigin.MAIN and d.resolution and not d.degenerate:
            out.append((f"Branch (depth {d.depth}) on: {d.question}", d.resolution, d))
    for s in st.syntheses.values():
        if not s.degenerate:
            out.append(("Synthesis of converging branches", s.resolution, s))
    for later, earlier, reason in st.contradictions:
        out.append((f"Unreconciled: '{earlier.question}' versus '{later.question}'", reason, None))
    stubs: list[TensionNode] = sorted(st.open_stubs(), key=lambda t: (-t.urgency, t.id))[: cfg.final_stubs]
    for t in stubs:
        out.append((f"Open question (urgency {t.urgency:.2f})", t.question, t))
    return out


def _groups(state: SessionState, main: DebateNode, sections: list[Section]) -> list[list[Section]]:
    """Consecutive groups, each of which fits one prompt whole."""
    frame = state.frame(main)()
    groups: list[list[Section]] = [[]]
    for section in sections:
        trial = [*groups[-1], section]
        prompt = tpl.integrate(frame, [(label, text) for label, text, _ in trial], partial=True)
        if prompt.omitted_chars and groups[-1]:
            groups.append([section])
        else:
            groups[-1] = trial
    return groups


async def _integrate_part(
    state: SessionState, main: DebateNode, part: int, group: list[Section]
) -> Section | None:
    st = state
    prompt = tpl.integrate(st.frame(main)(), [(label, text) for label, text, _ in group], partial=True)
    meta = CallMeta(agent="root-integrator", debate=main.id, phase=CallPhase.INTEGRATE)
    done = await st.ask(prompt, max_tokens=st.config.final_tokens(), meta=meta)
    if done is None:
        return None
    node = IntegrationNode(id=f"{st.session_id}/integration/{part}", session=st.session_id, part=part,
                           text=st.clean(done.text), degenerate=bool(done.degenerate))  # fmt: skip
    members = [n for _, _, n in group if n is not None]
    st.write([node], [st.edge(node.id, n.id, EdgeType.INTEGRATES) for n in members])
    return (f"Integration of part {part}", "(left out: it looped)" if node.degenerate else node.text, node)


async def integrate(state: SessionState, main: DebateNode) -> FinalNode:
    st, cfg = state, state.config
    sections = _sections(st, main)
    used = [n for _, _, n in sections if n is not None]
    asked = st.question is not None
    prompt = tpl.integrate(st.frame(main)(), [(label, text) for label, text, _ in sections], asked=asked)
    parts: list[IntegrationNode] = []
    level = 0
    while prompt.omitted_chars and level < MAX_LEVELS:
        level += 1
        groups = _groups(st, main, sections)
        first = len(parts) + 1
        done = await asyncio.gather(*(_integrate_part(st, main, first + k, g) for k, g in enumerate(groups)))
        if not all(done):  # a part failed: read what there is, cut to fit, rather than lose it
            break
        sections = [s for s in done if s is not None]
        parts += [n for _, _, n in sections if isinstance(n, IntegrationNode)]
        prompt = tpl.integrate(st.frame(main)(), [(label, text) for label, text, _ in sections], asked=asked)
    meta = CallMeta(agent="root-integrator", debate=main.id, phase=CallPhase.FINAL)
    done_final = await st.ask(prompt, max_tokens=cfg.final_tokens(), meta=meta)
    # Degrade: without the call, the main resolution stands as the final text, and says why.
    text = (
        st.clean(done_final.text)
        if done_final is not None
        else f"(final integration failed) {main.resolution}"
    )
    final = FinalNode(
        id=f"{st.session_id}/final",
        session=st.session_id,
        text=text,
        degenerate=done_final is not None and bool(done_final.degenerate),
        answer=await short_answer(st, main, text) if asked and done_final is not None else None,
    )
    st.embedder.prefetch([text, *pieces(text)])  # a revisit checks the open stubs against it
    st.write([final], [st.edge(final.id, n.id, EdgeType.INTEGRATES) for n in [*used, *parts]])
    st.final = final
    return final


async def short_answer(state: SessionState, main: DebateNode, final: str) -> str | None:
    """A question session's answer as a scorer reads it, taken from the final text by
    one structured call of the final role. None when the call fails or the final text
    gives no answer: an evaluation counts that as wrong, never drops it."""
    meta = CallMeta(agent="answer", debate=main.id, phase=CallPhase.FINAL)
    prompt = tpl.short_answer(state.frame(main)(), final)
    done = await state.ask(prompt, max_tokens=state.config.flag_tokens(), meta=meta, schema=ShortAnswer)
    if done is None or not isinstance(done.parsed, ShortAnswer):
        return None
    answer = done.parsed.answer.strip()
    return None if not answer or answer.lower().strip(".") == "no answer" else answer
