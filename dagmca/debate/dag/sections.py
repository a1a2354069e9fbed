"""The passage in prompts. It goes whole into every prompt when it fits its
share of the budget. When it does not, the session takes the long-passage path and
says so: the passage is cut into sections on paragraph boundaries; one call per
section maps its claims, in order; the main debate (and the integrator) read the map
of every section; each branch, and its observers, read the sections most relevant to
its question verbatim, and the map of the rest. Which sections a debate read, and how,
is in the graph: `(d:Debate)-[:READS {as: map | verbatim}]->(s:Section)`."""

from __future__ import annotations

import asyncio
import re

from dagmca.debate.events import PassageSectioned
from dagmca.debate.state import SessionState
from dagmca.debate.state.prompt_space import PromptSpace
from dagmca.graph import CallPhase, DebateNode, DebateOrigin, EdgeRecord, EdgeType, SectionNode
from dagmca.llm.base import CallMeta
from dagmca.llm.tokens import TokenCounter
from dagmca.prompts.budget import PromptBudget, fit, sentence_starts
from dagmca.prompts.templates import SYSTEM
from dagmca.prompts.text import fence
from dagmca.similarity.counts import EmbedPhase

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
VERBATIM_SHARE = 0.7  # of a branch's passage share: relevant sections verbatim; the rest, the map


def passage_share(state: SessionState) -> int:
    """The tokens the passage may take in a prompt: a share of the tightest budget (the
    final answer's, whose output cap is the largest)."""
    budget = state.prompts.budget
    return int(state.handles.config.passage_share * budget.available(budget.final))


def split(text: str, counter: TokenCounter, max_tokens: int) -> list[tuple[str, int, int]]:
    """Sections of at most `max_tokens` each, cut between paragraphs (a paragraph longer
    than that, between sentences): (text, first paragraph, last paragraph)."""
    paragraphs = [p.strip() for p in _PARAGRAPH.split(text) if p.strip()]
    if len(paragraphs) == 1:  # no blank lines: each line is a paragraph
        paragraphs = [p.strip() for p in text.splitlines() if p.strip()]
    pieces: list[tuple[str, int]] = []
    for number, paragraph in enumerate(paragraphs, start=1):
        if counter.count(paragraph) <= max_tokens:
            pieces.append((paragraph, number))
            continue
        chunk_start = previous = 0
        for end in [*sentence_starts(paragraph), len(paragraph)]:
            if counter.count(paragraph[chunk_start:end]) > max_tokens and previous > chunk_start:
                pieces.append((paragraph[chunk_start:previous].strip(), number))
                chunk_start = previous
            previous = end
        pieces.append((paragraph[chunk_start:].strip(), number))
    sections: list[tuple[str, int, int]] = []
    current: list[tuple[str, int]] = []
    tokens = 0
    for piece, number in pieces:
        t = counter.count(piece)
        if current and tokens + t > max_tokens:
            sections.append(("\n\n".join(p for p, _ in current), current[0][1], current[-1][1]))
            current, tokens = [], 0
        current.append((piece, number))
        tokens += t
    if current:
        sections.append(("\n\n".join(p for p, _ in current), current[0][1], current[-1][1]))
    return sections


async def prepare(state: SessionState) -> None:
    """Decide how the passage goes into prompts; on the long path, cut and map it."""
    counter = state.prompts.budget.counter
    state.prompts.passage_tokens = counter.count(state.passage)
    share = passage_share(state)
    if state.prompts.sections:  # a revisit: cut and mapped when the session ran
        state.prompts.passage_mode = "sections"
        state.prompts.default_block = map_block(state.prompts, state.prompts.sections)
        return
    if state.prompts.passage_tokens <= share:
        return
    cut = split(state.passage, counter, max(200, share // 3))
    sid = state.handles.session_id
    state.prompts.sections = [
        SectionNode(
            id=f"{sid}/section/{i}",
            session=sid,
            number=i,
            title=f"§{i} (paragraph{'s' if a != b else ''} {a}{f'-{b}' if a != b else ''})",
            text=text,
            tokens=counter.count(text),
        )
        for i, (text, a, b) in enumerate(cut, start=1)
    ]
    state.prompts.passage_mode = "sections"
    state.write(state.prompts.sections)
    state.handles.emit(
        PassageSectioned(
            sections=len(state.prompts.sections), tokens=state.prompts.passage_tokens, share=share
        )
    )
    cap = max(64, min(600, share // len(state.prompts.sections)))
    claims = await asyncio.gather(*(_map(state, s, cap) for s in state.prompts.sections))
    for section, text in zip(state.prompts.sections, claims, strict=True):
        section.claims = text
    state.write(state.prompts.sections)
    state.prompts.default_block = map_block(state.prompts, state.prompts.sections)


async def _map(state: SessionState, section: SectionNode, cap: int) -> str:
    """One section's claims, in order: its entry in the map."""
    total = len(state.prompts.sections)
    words = PromptBudget.words(cap)
    ask = (
        f"This is section {section.number} of {total} of a longer passage. List the claims it "
        "makes, in the order it makes them, faithfully: one sentence each, in your own words, "
        "keeping the qualifications, examples and numbers the argument rests on. Add nothing "
        f"the section does not say. At most {words} words."
    )
    prompt = fit(SYSTEM, [fence("passage", section.text)], [ask], state.prompts.budget, cap)
    meta = CallMeta(agent="mapper", debate=f"{state.handles.session_id}/main", phase=CallPhase.MAP)
    done = await state.ask(prompt, max_tokens=cap, meta=meta)
    if done is not None and done.text.strip():
        return state.clean(done.text)
    # No map entry: the section's opening stands in for it, marked as what it is.
    starts = sentence_starts(section.text)
    opening = section.text[: starts[1]] if len(starts) > 1 else section.text
    return f"[no map: the call failed; the section opens:] {opening.strip()}"


def map_block(prompts: PromptSpace, sections: list[SectionNode], intro: bool = True) -> str:
    entries = "\n\n".join(f"{s.title}\n{s.claims}" for s in sections)
    head = (
        f"The passage is long ({prompts.passage_tokens:,} tokens), so it is given as a faithful map of "
        f"its {len(prompts.sections)} sections, in order: each section's claims.\n"
        if intro
        else "The other sections, mapped:\n"
    )
    return head + fence("passage", entries)


async def block_for(state: SessionState, debate: DebateNode) -> None:
    """The passage block of `debate`, kept in `state.prompts.passage_blocks`, and which sections
    it read written as READS edges. A branch reads the sections closest to its question
    (embedding cosine) verbatim, as many as fit, in the passage's order; the main debate
    reads the map."""
    prompts = state.prompts
    if prompts.passage_mode != "sections" or debate.id in prompts.passage_blocks:
        return
    edges: list[EdgeRecord]
    if debate.origin is DebateOrigin.MAIN:
        prompts.passage_blocks[debate.id] = prompts.default_block
        edges = [
            state.handles.edge(debate.id, s.id, EdgeType.READS, **{"as": "map"}) for s in prompts.sections
        ]
        state.write([], edges)
        return
    sims = await state.handles.embedder.amatrix(
        [debate.question, *(s.text for s in prompts.sections)], phase=EmbedPhase.SECTIONS
    )
    ranked = sorted(range(len(prompts.sections)), key=lambda i: (-float(sims[0, i + 1]), i))
    room = int(passage_share(state) * VERBATIM_SHARE)
    chosen: list[int] = []
    for i in ranked:
        if prompts.sections[i].tokens <= room:
            chosen.append(i)
            room -= prompts.sections[i].tokens
    verbatim = [prompts.sections[i] for i in sorted(chosen)]
    mapped = [s for i, s in enumerate(prompts.sections) if i not in chosen]
    body = "\n\n".join(f"[{s.title}]\n{s.text}" for s in verbatim)
    block = (
        f"The passage is long ({prompts.passage_tokens:,} tokens, {len(prompts.sections)} sections). "
        f"The sections most relevant to this debate's question, verbatim:\n{fence('passage', body)}"
    )
    if mapped:
        block += "\n\n" + map_block(state.prompts, mapped, intro=False)
    prompts.passage_blocks[debate.id] = block
    rank = {i: r for r, i in enumerate(ranked, start=1)}
    edges = [
        state.handles.edge(
            debate.id, prompts.sections[i].id, EdgeType.READS, **{"as": "verbatim", "rank": rank[i]}
        )
        for i in sorted(chosen)
    ]
    edges += [state.handles.edge(debate.id, s.id, EdgeType.READS, **{"as": "map"}) for s in mapped]
    state.write([], edges)
