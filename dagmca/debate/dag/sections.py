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
    budget = state.budget
    return int(state.config.passage_share * budget.available(budget.final))


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
    counter = state.budget.counter
    state.passage_tokens = counter.count(state.passage)
    share = passage_share(state)
    if state.sections:  # a revisit: cut and mapped when the session ran
        state.passage_mode = "sections"
        state.default_block = map_block(state, state.sections)
        return
    if state.passage_tokens <= share:
        return
    cut = split(state.passage, counter, max(200, share // 3))
    sid = state.session_id
    state.sections = [
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
    state.passage_mode = "sections"
    state.write(state.sections)
    state.emit(PassageSectioned(sections=len(state.sections), tokens=state.passage_tokens, share=share))
    cap = max(64, min(600, share // len(state.sections)))
    claims = await asyncio.gather(*(_map(state, s, cap) for s in state.sections))
    for section, text in zip(state.sections, claims, strict=True):
        section.claims = text
    state.write(state.sections)
    state.default_block = map_block(state, state.sections)


async def _map(state: SessionState, section: SectionNode, cap: int) -> str:
    """One section's claims, in order: its entry in the map."""
    total = len(state.sections)
    words = PromptBudget.words(cap)
    ask = (
        f"This is section {section.number} of {total} of a longer passage. List the claims it "
        "makes, in the order it makes them, faithfully: one sentence each, in your own words, "
        "keeping the qualifications, examples and numbers the argument rests on. Add nothing "
        f"the section does not say. At most {words} words."
    )
    prompt = fit(SYSTEM, [fence("passage", section.text)], [ask], state.budget, cap)
    meta = CallMeta(agent="mapper", debate=f"{state.session_id}/main", phase=CallPhase.MAP)
    done = await state.ask(prompt, max_tokens=cap, meta=meta)
    if done is not None and done.text.strip():
        return state.clean(done.text)
    # No map entry: the section's opening stands in for it, marked as what it is.
    starts = sentence_starts(section.text)
    opening = section.text[: starts[1]] if len(starts) > 1 else section.text
    return f"[no map: the call failed; the section opens:] {opening.strip()}"


def map_block(state: SessionState, sections: list[SectionNode], intro: bool = True) -> str:
    entries = "\n\n".join(f"{s.title}\n{s.claims}" for s in sections)
    head = (
        f"The passage is long ({state.passage_tokens:,} tokens), so it is given as a faithful map of "
        f"its {len(state.sections)} sections, in order: each section's claims.\n"
        if intro
        else "The other sections, mapped:\n"
    )
    return head + fence("passage", entries)


async def block_for(state: SessionState, debate: DebateNode) -> None:
    """The passage block of `debate`, kept in `state.passage_blocks`, and which sections
    it read written as READS edges. A branch reads the sections closest to its question
    (embedding cosine) verbatim, as many as fit, in the passage's order; the main debate
    reads the map."""
    if state.passage_mode != "sections" or debate.id in state.passage_blocks:
        return
    edges: list[EdgeRecord]
    if debate.origin is DebateOrigin.MAIN:
        state.passage_blocks[debate.id] = state.default_block
        edges = [state.edge(debate.id, s.id, EdgeType.READS, **{"as": "map"}) for s in state.sections]
        state.write([], edges)
        return
    sims = await state.embedder.amatrix(
        [debate.question, *(s.text for s in state.sections)], phase=EmbedPhase.SECTIONS
    )
    ranked = sorted(range(len(state.sections)), key=lambda i: (-float(sims[0, i + 1]), i))
    room = int(passage_share(state) * VERBATIM_SHARE)
    chosen: list[int] = []
    for i in ranked:
        if state.sections[i].tokens <= room:
            chosen.append(i)
            room -= state.sections[i].tokens
    verbatim = [state.sections[i] for i in sorted(chosen)]
    mapped = [s for i, s in enumerate(state.sections) if i not in chosen]
    body = "\n\n".join(f"[{s.title}]\n{s.text}" for s in verbatim)
    block = (
        f"The passage is long ({state.passage_tokens:,} tokens, {len(state.sections)} sections). "
        f"The sections most relevant to this debate's question, verbatim:\n{fence('passage', body)}"
    )
    if mapped:
        block += "\n\n" + map_block(state, mapped, intro=False)
    state.passage_blocks[debate.id] = block
    rank = {i: r for r, i in enumerate(ranked, start=1)}
    edges = [
        state.edge(debate.id, state.sections[i].id, EdgeType.READS, **{"as": "verbatim", "rank": rank[i]})
        for i in sorted(chosen)
    ]
    edges += [state.edge(debate.id, s.id, EdgeType.READS, **{"as": "map"}) for s in mapped]
    state.write([], edges)
