"""The sessions the cookbook is compared on, made by the scripted fake into a SQLite
store: one rich session (branches, a synthesis, stubs, superseded stubs, a
contradiction, a reference cycle, a duplicate), a built corpus of two passages (the
later one answers a stub of the earlier) and a study of three samples of one passage
(its findings). Shared by the embedded-Cypher tests and
`scripts/bench_cypher.py`, so both measure the same graph."""

from __future__ import annotations

from pathlib import Path

from dagmca.graph import FINDINGS_SESSION, EdgeType, NodeKind, NodeRecord, edge
from dagmca.store.sqlite import SQLiteStore
from tests.support.sessions import PASSAGE, QUESTIONS, lens_by_lens, run_scripted, scripted
from tests.support.stability import SESSIONS, aligned_three

SHOPS = "Shops in the centre lose few suburban visitors."
RICH = "s1"
CORPUS = ("p0", "p1")


def _answers_shops(question: str, text: str) -> tuple[str, str]:
    return ("answered", SHOPS) if question == QUESTIONS[3] and SHOPS in text else ("open", "")


def rich_session(store: SQLiteStore, out_dir: Path) -> None:
    """Session `s1` in `store`, with every relation a cookbook query needs."""
    answers = {
        QUESTIONS[0]: "Pricing works when revenue funds buses and exemptions protect workers.",
        QUESTIONS[1]: "Pricing works when revenue funds buses and exemptions protect workers.",
        QUESTIONS[2]: f"{SHOPS} Legal ring fencing rarely lasts.",
    }
    _, state, _ = run_scripted(
        store, out_dir, scripted(QUESTIONS, answers, stub=_answers_shops), session=RICH,
        max_branches=3, max_depth=1, max_revisits=1, rounds=1, strategy="urgent", agent_memory="store",
    )  # fmt: skip
    merged = sorted({e.source for e in store.edges(RICH, EdgeType.MERGES_INTO)})
    b1 = merged[0]
    b3 = next(b for b in ("s1/main/b1", "s1/main/b2", "s1/main/b3") if b not in merged)
    first, second = sorted(state.graph.tensions)[:2]
    store.write(
        [],
        [
            edge(b1, b3, EdgeType.CONTRADICTS, RICH, similarity=0.2, method="llm", verdict="contradict"),
            edge(b1, b3, EdgeType.REFERENCES, RICH),
            edge(b3, b1, EdgeType.REFERENCES, RICH),
            edge(second, first, EdgeType.DUPLICATES, RICH, similarity=0.7, method="llm",
                 verdict="duplicate", reason="both ask who pays"),
        ],
    )  # fmt: skip
    _ledger(store)


def _ledger(store: SQLiteStore) -> None:
    """Three claims of the final, one of each origin, as the emergence ledger records
    them (the scripted fake does not trace one)."""
    final = store.nodes(RICH, NodeKind.FINAL)[0]
    turns = [n for n in store.nodes(RICH, NodeKind.TURN) if n.props.get("perspective")][:2]
    claims, edges = [], []
    for number, origin in enumerate(("single", "recombined", "emergent"), 1):
        claim = f"{final.id}/claim{number}"
        sources = {"single": turns[:1], "recombined": turns, "emergent": []}[origin]
        claims.append(NodeRecord(
            id=claim, kind=NodeKind.CLAIM, session=RICH, created_at=final.created_at,
            props={"text": f"claim {number}", "origin": origin, "reason": f"judged {origin}",
                   "number": number,
                   "superseded": False, "perspectives": [t.props["perspective"] for t in sources],
                   **({"first_stated_at": sources[0].id} if sources else {})},
        ))  # fmt: skip
        edges.append(edge(claim, final.id, EdgeType.STATED_IN, RICH))
        edges += [edge(claim, t.id, EdgeType.DERIVES_FROM, RICH, verdict="states", sentence=f"s{number}")
                  for t in sources]  # fmt: skip
    store.write(claims, edges)


def built_corpus(store: SQLiteStore, out_dir: Path) -> None:
    """Sessions `p0` and `p1` in `store`, built as `dagmca build` builds: `p1`'s passage
    answers a stub of `p0` (a SUPERSEDES across sessions)."""
    from dagmca.config import SessionConfig
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import Passage
    from dagmca.llm.fake import ScriptedLLM
    from tests.support.opened import run_build

    cfg = SessionConfig(
        llm="fake", max_branches=3, max_depth=1, max_revisits=1, rounds=1, strategy="urgent",
        stub_prefilter=0.0,
    )  # fmt: skip
    first = Passage(CORPUS[0], "p0.txt", PASSAGE, "Congestion pricing")
    later = Passage(CORPUS[1], "p1.txt", f"A survey of retailers. {SHOPS} Parking matters more.", "Retail")
    job = Build(cfg, store, [first, later], reports=lambda s: out_dir / s)
    todo = job.plan()
    llm = ScriptedLLM(lens_by_lens(scripted(QUESTIONS[:4], stub=_answers_shops)))
    run_build(job, todo, store, llm)
    if [o.status for o in job.outcomes.values()] != ["done", "done"]:
        raise RuntimeError(f"the corpus build failed: {job.outcomes}")


# The store each comparison runs on, the session its `$session` names, and what is pushed
# to the Bolt server (the studies' findings are the store's `_findings`, with the
# sessions and members they reach).
STORES = {
    "rich": (rich_session, RICH, [RICH]),
    "corpus": (built_corpus, CORPUS[0], list(CORPUS)),
    "stability": (aligned_three, SESSIONS[0], [*SESSIONS, FINDINGS_SESSION]),
}
