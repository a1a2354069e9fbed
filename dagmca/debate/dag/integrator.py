"""Final integration: the root integrator reads the whole graph, every
resolution, synthesis and open question whole. When they do not fit one prompt it
integrates hierarchically: groups that fit first, each group's integration a recorded
`Integration` node, then those (again in groups if they must be)."""

from __future__ import annotations

import asyncio

from dagmca.debate.state import SessionState
from dagmca.debate.state.graph_so_far import GraphSoFar
from dagmca.graph import (
    CallPhase,
    DebateNode,
    DebateOrigin,
    EdgeType,
    FinalNode,
    GraphNode,
    IntegrationNode,
    TensionNode,
)
from dagmca.llm.base import CallMeta
from dagmca.prompts import final as fp
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import ShortAnswer
from dagmca.similarity import pieces

Section = tuple[fp.Section, GraphNode | None]  # a labelled section, the node it stands for
MAX_LEVELS = 4


def _sections(graph: GraphSoFar, main: DebateNode, final_stubs: int) -> list[Section]:
    """The graph as the integrator reads it, each part under its label; only what exists
    (of the open stubs, the `final_stubs` most urgent)."""
    # degenerate texts (loops, echoes of a prompt) are in the graph, not in the answer
    sound = main.resolution if main.resolution and not main.degenerate else "(none)"
    out: list[Section] = [(fp.Section("M", "Main debate resolution", sound), main)]
    labels: dict[str, str] = {}  # debate id -> its label
    for d in graph.debates.values():
        if d.origin is not DebateOrigin.MAIN and d.resolution and not d.degenerate:
            labels[d.id] = f"B{len(labels) + 1}"
            out.append(
                (fp.Section(labels[d.id], f"Branch (depth {d.depth}) on: {d.question}", d.resolution), d)
            )
    syntheses = [s for s in graph.syntheses.values() if not s.degenerate]
    for k, s in enumerate(syntheses, start=1):
        out.append((fp.Section(f"S{k}", "Synthesis of converging branches", s.resolution), s))
    for k, (later, earlier, _) in enumerate(graph.contradictions, start=1):
        # both positions whole, as their debates resolved them: not the judge's reason
        sides = [(labels.get(d.id, d.id), d.question, d.resolution or "(none)") for d in (earlier, later)]
        out.append((fp.contradiction(f"C{k}", sides), None))
    stubs: list[TensionNode] = sorted(graph.open_stubs(), key=lambda t: (-t.urgency, t.id))[:final_stubs]
    for k, t in enumerate(stubs, start=1):
        out.append((fp.Section(f"Q{k}", f"Open question (urgency {t.urgency:.2f})", t.question), t))
    return out


def _prompt(state: SessionState, main: DebateNode, group: list[Section], partial: bool = False) -> Prompt:
    return fp.integrate(
        state.prompts.frame(main)(), [s for s, _ in group], partial=partial, asked=state.question is not None
    )


def _groups(state: SessionState, main: DebateNode, sections: list[Section]) -> list[list[Section]]:
    """Consecutive groups, each of which fits one prompt whole."""
    frame = state.prompts.frame(main)()
    groups: list[list[Section]] = [[]]
    for section in sections:
        trial = [*groups[-1], section]
        prompt = fp.integrate(frame, [s for s, _ in trial], partial=True)
        if prompt.omitted_chars and groups[-1]:
            groups.append([section])
        else:
            groups[-1] = trial
    return groups


async def _integrate_part(
    state: SessionState, main: DebateNode, part: int, group: list[Section]
) -> Section | None:
    st = state
    prompt = _prompt(st, main, group, partial=True)
    meta = CallMeta(agent="root-integrator", debate=main.id, phase=CallPhase.INTEGRATE)
    done = await st.ask(prompt, max_tokens=st.handles.config.final_tokens(), meta=meta)
    if done is None:
        return None
    sid = st.handles.session_id
    node = IntegrationNode(id=f"{sid}/integration/{part}", session=sid, part=part,
                           text=st.clean(done.text), degenerate=bool(done.degenerate))  # fmt: skip
    members = [(s.label, n) for s, n in group if n is not None]
    st.write(
        [node], [st.handles.edge(node.id, n.id, EdgeType.INTEGRATES, label=label) for label, n in members]
    )
    text = "(left out: it looped)" if node.degenerate else node.text
    return fp.Section(f"I{part}", f"Integration of part {part}", text), node


async def integrate(state: SessionState, main: DebateNode) -> FinalNode:
    st, cfg = state, state.handles.config
    sections = _sections(st.graph, main, st.handles.config.final_stubs)
    given = {s.label: n for s, n in sections}  # every label the integrator is shown
    asked = st.question is not None
    prompt = _prompt(st, main, sections)
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
        given.update({s.label: n for s, n in sections})
        parts += [n for _, n in sections if isinstance(n, IntegrationNode)]
        prompt = _prompt(st, main, sections)
    meta = CallMeta(agent="root-integrator", debate=main.id, phase=CallPhase.FINAL)
    done_final = await st.ask(prompt, max_tokens=cfg.final_tokens(), meta=meta)
    # Degrade: without the call, the main resolution stands as the final text, and says why.
    if done_final is not None:
        checked = fp.check_citations(st.clean(done_final.text), list(given))
    else:  # the resolution as it stands: it cites nothing
        fallback = f"(final integration failed) {main.resolution}"
        claims = [s for s, _ in fp.claim_sentences(fallback)]
        checked = fp.Checked(fallback, [], [], len(claims), tuple(claims))
    text, cited, removed = checked.text, checked.cited, checked.removed
    final = FinalNode(
        id=f"{st.handles.session_id}/final",
        session=st.handles.session_id,
        text=text,
        degenerate=done_final is not None and bool(done_final.degenerate),
        answer=await short_answer(st, main, text) if asked and done_final is not None else None,
        citations=cited,
        removed_citations=removed,
        claims=checked.claims,
        uncited=list(checked.uncited),
    )
    st.handles.embedder.prefetch([text, *pieces(text)])  # a revisit checks the open stubs against it
    used = [(label, n) for label, n in given.items() if n is not None and not isinstance(n, IntegrationNode)]
    edges = [
        st.handles.edge(final.id, n.id, EdgeType.INTEGRATES, label=label, cited=label in cited)
        for label, n in used
    ]
    edges += [st.handles.edge(final.id, n.id, EdgeType.INTEGRATES) for n in parts]
    st.write([final], edges)
    st.graph.final = final
    return final


async def short_answer(state: SessionState, main: DebateNode, final: str) -> str | None:
    """A question session's answer as a scorer reads it, taken from the final text by
    one structured call of the final role. None when the call fails or the final text
    gives no answer: an evaluation counts that as wrong, never drops it."""
    meta = CallMeta(agent="answer", debate=main.id, phase=CallPhase.FINAL)
    prompt = tpl.short_answer(state.prompts.frame(main)(), final)
    done = await state.ask(
        prompt, max_tokens=state.handles.config.flag_tokens(), meta=meta, schema=ShortAnswer
    )
    if done is None or not isinstance(done.parsed, ShortAnswer):
        return None
    answer = done.parsed.answer.strip()
    return None if not answer or answer.lower().strip(".") == "no answer" else answer
