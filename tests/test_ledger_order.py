"""The ledger reads a session's texts in the protocol's order, whatever order the store
wrote them in: parallel branches finish in a different order each run, and a ledger that
followed the writes would ask different requests each run (cache misses, a resume that
asks anew)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dagmca.debate.ledger.texts import before, said
from dagmca.graph import DebateNode, EdgeType, NodeKind, TurnNode, node_from_record
from dagmca.store.sqlite import SQLiteStore
from tests.support.sessions import run_scripted

pytestmark = pytest.mark.slow


def test_the_order_of_what_was_said_does_not_depend_on_the_order_of_the_writes(
    store: SQLiteStore, tmp_path: Path
) -> None:
    run_scripted(store, tmp_path, max_branches=3, max_depth=2, rounds=2, monitor_every="turn", ledger="off")
    nodes = [node_from_record(r) for r in store.nodes("s1")]
    merged: dict[str, list[str]] = {}
    for e in store.edges("s1", EdgeType.MERGES_INTO):
        merged.setdefault(e.target, []).append(e.source)
    debates = {n.id for n in nodes if isinstance(n, DebateNode)}
    assert sum("/b" in d for d in debates) >= 3, "the session branched"
    pool, traceable = said(nodes, merged)
    shuffler = random.Random(7)
    for _ in range(5):
        shuffled = list(nodes)
        shuffler.shuffle(shuffled)
        again, again_traceable = said(shuffled, merged)
        assert again == pool
        assert again_traceable == traceable
    # the protocol's order: the main debate's turns before any branch's, round 1 before 2
    turns = [s for s in pool if s.kind is NodeKind.TURN]
    main = [i for i, s in enumerate(turns) if s.debate.endswith("/main")]
    branch = [i for i, s in enumerate(turns) if not s.debate.endswith("/main")]
    assert main and branch and max(main) < min(branch)
    rounds: dict[str, list[int]] = {s.debate: [] for s in turns}
    for s in turns:
        rounds[s.debate].append(s.round or 0)
    assert all(r == sorted(r) for r in rounds.values())
    # a resolution follows the turn that gave it, and what came before it excludes its own words
    written = {n.id: n for n in nodes}
    for target in (t for t in traceable if t.kind is NodeKind.DEBATE):
        earlier = before(target, pool)
        assert all(s.order < target.order and s.text.strip() != target.text.strip() for s in earlier)
        own = [s for s in earlier if s.debate == target.node and isinstance(written[s.node], TurnNode)]
        assert own, f"{target.node}'s own turns come before its resolution"
