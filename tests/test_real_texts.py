"""Real texts for real models, on a scripted strong model and a 1,241-word
essay, asserting on the prompts actually sent: the passage whole, every quoted text
whole, answers stored as written, and where a budget must cut, whole sentences left
out, oldest first, marked and counted; a passage too long for its share takes the
section path, recorded in the graph."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dagmca.debate.session import SessionResult
from dagmca.debate.state import SessionState
from dagmca.graph import CallPhase, EdgeType, NodeKind, Phase
from dagmca.llm.fake import ScriptedLLM
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from tests.support.sessions import run_scripted
from tests.support.strong_fake import LONG_PASSAGE, StrongModel, words

MARK = re.compile(r"\[… (\d+) earlier sentences? left out to fit the context window …\] ")
TURN_PHASES = {p.value for p in Phase}


def strong_run(
    store: SQLiteStore, tmp_path: Path, model: StrongModel, **settings: object
) -> tuple[SessionResult, SessionState, ScriptedLLM]:
    settings = {"max_branches": 2, "max_depth": 1, "rounds": 2, "strategy": "urgent", **settings}
    return run_scripted(store, tmp_path, model, passage=LONG_PASSAGE, caps=True, **settings)


FENCED = re.compile(r"<(turn|passage)>\n(.*?)\n</\1>", re.DOTALL)


def cut_words(text: str, vocabulary: set[str]) -> set[str]:
    """Words quoted in `text` (inside its <turn> and <passage> fences, or all of it when it
    has none) that are not words the passage or the model used: a word cut in half."""
    quoted = [m.group(2) for m in FENCED.finditer(text)] or [text]
    return {w for q in quoted for w in words(MARK.sub("", q)) if w not in vocabulary}


@pytest.mark.slow
def test_a_strong_model_gets_the_passage_and_every_text_whole(store: SQLiteStore, tmp_path: Path) -> None:
    model = StrongModel()
    result, state, fake = strong_run(store, tmp_path, model)
    assert len(words(LONG_PASSAGE)) > 400 and len(LONG_PASSAGE.split()) >= 1200
    # the whole passage in every prompt of the main debate: turns, observers, the final
    main_calls = [c for c in fake.calls if c.meta.debate == "s1/main"]
    assert len(main_calls) > 30
    # a strong model's long answers, lists and paragraphs never trip the degeneration guard
    assert not any(c.meta.reask for c in fake.calls) and result.session.reasks == 0
    assert not any(n.props.get("degenerate") for n in state.handles.store.nodes("s1"))
    assert all(LONG_PASSAGE.strip() in c.prompt for c in main_calls)
    # every debate's resolution and every synthesis whole in the final integration's prompt
    final = [c for c in fake.calls if c.meta.phase == CallPhase.FINAL]
    assert len(final) == 1
    resolutions = [d.resolution for d in state.graph.debates.values()] + [
        s.resolution for s in state.graph.syntheses.values()
    ]
    assert len(resolutions) >= 3 and all(r and r in final[0].prompt for r in resolutions)
    # what the model wrote is stored as it wrote it: paragraphs and bulleted lists kept
    turns = [n.props["text"] for n in store.nodes("s1", NodeKind.TURN)]
    written = set(model.said)
    assert turns and all(t in written for t in turns if t != "(no answer)")
    assert any("\n\n" in t for t in turns) and any("\n- " in t for t in turns)
    # nothing cut: no mark, nothing counted, no word cut in half in any prompt or text
    assert result.session.omitted_chars == 0 and all(r.omitted_chars == 0 for r in store.calls("s1"))
    vocabulary = words(LONG_PASSAGE) | words(" ".join(model.said)) | words(" ".join(model.flags))
    for text in [c.prompt for c in fake.calls] + turns:
        assert not MARK.search(text) and "…" not in text
        assert not cut_words(text, vocabulary)
    assert check_store(store, "s1") == []


@pytest.mark.slow
def test_a_small_window_leaves_out_whole_sentences_oldest_first_and_counts_them(
    store: SQLiteStore, tmp_path: Path
) -> None:
    model = StrongModel()
    # 3,000 tokens: the passage (1,427) goes whole, but not every quote beside it. An
    # observer is asked one turn at a time: a group of three would not fit, and a flag
    # must quote the turn it was shown
    result, state, fake = strong_run(
        store,
        tmp_path,
        model,
        context_window=3000,
        passage_share=0.9,
        max_synthesis_tokens=400,
        observer_calls="per-lens",
    )
    records = store.calls("s1")
    cut = [r for r in records if r.omitted_chars]
    assert cut, "some prompts had to leave something out"
    assert result.session.omitted_chars == sum(r.omitted_chars for r in records) > 0
    marked = [c.prompt for c in fake.calls if MARK.search(c.prompt)]
    assert marked
    for prompt in marked:
        for m in MARK.finditer(prompt):
            kept = prompt[m.end() : prompt.index("\n</turn>", m.end())]
            # what follows the mark is the rest of something the model said, from a sentence on
            # (some answer: a sentence the model reuses may also end another, after "because")
            # (or of a flag it raised, which the strange loop is shown, or of a resolution
            # written from its parts, with a disagreement the strange loop dropped put back)
            texts = model.said + model.flags + [d.resolution for d in state.graph.debates.values()]
            tails = [said for said in texts if said.endswith(kept) and len(said) > len(kept)]
            assert any(re.search(r"(\n|[.!?…][ \t]+)$", t[: -len(kept)]) for t in tails)
    for c in fake.calls:  # the passage itself is never what gives way
        assert LONG_PASSAGE.strip() in c.prompt or c.meta.phase == CallPhase.MAP
    # the final integration did not fit one prompt: groups first, each a recorded node
    parts = store.nodes("s1", NodeKind.INTEGRATION)
    assert len(parts) >= 2
    integrates = store.edges("s1", EdgeType.INTEGRATES)
    for p in parts:
        assert any(e.source == p.id for e in integrates), "each part integrates its group"
        assert ("s1/final", p.id) in {(e.source, e.target) for e in integrates}
    group_calls = [c for c in fake.calls if c.meta.phase == CallPhase.INTEGRATE]
    resolutions = [d.resolution for d in state.graph.debates.values() if d.resolution]
    assert all(any(r in c.prompt for c in group_calls) for r in resolutions), "each resolution read whole"
    assert check_store(store, "s1") == []


def test_a_reply_cut_by_its_cap_is_continued_and_never_stored_cut(store: SQLiteStore, tmp_path: Path) -> None:
    model = StrongModel()
    # answers of 200-300 words against a 260-word cap: some are cut, and continued
    _, _, fake = strong_run(store, tmp_path, model, max_turn_tokens=260, max_depth=0)
    continued = [c for c in fake.calls if c.messages[-1]["content"].startswith("Your reply was cut off")]
    assert continued
    turns = [n.props["text"] for n in store.nodes("s1", NodeKind.TURN)]
    assert all(t in set(model.said) or t.endswith(" […]") for t in turns)
    assert sum(t in set(model.said) for t in turns) == len(turns), "each cut answer was finished"


@pytest.mark.slow
def test_a_passage_too_long_for_its_share_takes_the_section_path(store: SQLiteStore, tmp_path: Path) -> None:
    model = StrongModel()
    # 3,500 tokens, of which half for the passage: the 1,427-token essay does not fit
    result, state, fake = strong_run(store, tmp_path, model, context_window=3500, max_synthesis_tokens=600)
    sections = sorted(store.nodes("s1", NodeKind.SECTION), key=lambda n: int(n.props["number"]))
    assert len(sections) >= 3 and result.session.passage_mode == "sections"
    # cut on paragraph boundaries: together, the sections are the passage's paragraphs
    paragraphs = [p.strip() for p in LONG_PASSAGE.split("\n\n") if p.strip()]
    assert "\n\n".join(str(s.props["text"]) for s in sections) == "\n\n".join(paragraphs)
    maps = [c for c in fake.calls if c.meta.phase == CallPhase.MAP]
    assert len(maps) == len(sections) and all(str(s.props["claims"]) for s in sections)
    # the main debate reads the map of every section, not the passage
    main = [c for c in fake.calls if c.meta.debate == "s1/main" and c.meta.phase in TURN_PHASES]
    assert main and all(LONG_PASSAGE.strip() not in c.prompt for c in main)
    assert all(str(s.props["claims"]) in c.prompt for s in sections for c in main)
    reads = store.edges("s1", EdgeType.READS)
    assert {e.target for e in reads if e.source == "s1/main"} == {s.id for s in sections}
    # each branch reads the sections closest to its question verbatim, the rest mapped
    branches = [d for d in state.graph.debates.values() if d.origin.value == "branch"]
    assert branches
    for b in branches:
        verbatim = [e for e in reads if e.source == b.id and e.props["as"] == "verbatim"]
        assert verbatim and all(isinstance(e.props["rank"], int) for e in verbatim)
        texts = {s.id: str(s.props["text"]) for s in sections}
        prompts = [c.prompt for c in fake.calls if c.meta.debate == b.id and c.meta.phase in TURN_PHASES]
        assert prompts and all(texts[e.target] in p for e in verbatim for p in prompts)
    status = json.loads((tmp_path / "s1" / "status.json").read_text())
    assert status["passage"] == {
        "mode": "sections",
        "tokens": state.prompts.passage_tokens,
        "sections": len(sections),
    }
    assert check_store(store, "s1") == []


@pytest.mark.slow
def test_fewer_observer_calls_find_no_fewer_flags(store: SQLiteStore, tmp_path: Path) -> None:
    """One call per lens per turn (per-lens), one per turn (joint), one per group of a
    phase's sibling turns (siblings, the default): the strong model's flags are not fewer."""
    found = {}
    for mode in ("per-lens", "joint", "siblings"):
        model = StrongModel()
        _, state, fake = strong_run(
            store,
            tmp_path / mode,
            model,
            session=mode,
            observer_calls=mode,
            max_depth=0,
            monitor_every="turn",
        )
        checks = [c for c in fake.calls if c.meta.phase == "monitor"]
        flagged = state.handles.store.edges(mode, EdgeType.FLAGGED_AT)
        found[mode] = (len(checks), len(flagged), len(state.graph.tensions))
    (lens_calls, lens_flags, lens_tensions), (joint_calls, joint_flags, joint_tensions), sibs = found.values()
    assert joint_calls * 3 == lens_calls, found  # three lenses
    assert joint_flags >= lens_flags > 0 and joint_tensions >= lens_tensions, found
    # the default tree (3 specialists): a round's 8 turns in 4 groups, the strange loop alone
    assert sibs[0] == 2 * 4 + 1 and joint_calls == 2 * 8 + 1, found
    assert sibs[1] >= joint_flags and sibs[2] >= joint_tensions, found
