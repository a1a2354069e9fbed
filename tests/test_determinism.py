"""A session's graph depends on its inputs and seed, never on which call returned
first: the condition for replaying a run from the cache (resume, re-run)."""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import pytest

from dagmca.graph import TensionStatus
from dagmca.llm.fake import ScriptedCall
from dagmca.llm.gate import current_rank
from dagmca.prompts.schemas import DuplicateVerdict, PairVerdict, StubVerdict
from dagmca.store.sqlite import SQLiteStore
from tests.support.determinism import pure, relative
from tests.support.judges import duplicate_questions
from tests.support.sessions import RunSession

pytestmark = pytest.mark.slow


def latency(salt: str):  # type: ignore[no-untyped-def]
    """A per-call delay of 0-20 ms that depends on the call and the salt."""

    def delay(call: ScriptedCall) -> float:
        digest = hashlib.sha256((salt + call.prompt + call.meta.agent).encode()).digest()
        return digest[0] / 255 * 0.02

    return delay


def test_the_graph_does_not_depend_on_latency(run_fake: RunSession) -> None:
    settings = dict(max_branches=3, max_depth=2, max_revisits=2, rounds=2, monitor_every="turn")
    graphs = []
    calls = []
    for salt in ("fast-first", "slow-first", "shuffled"):
        _, state, fake = run_fake(pure, session=salt, delay=latency(salt), **settings)
        # a stub is merged as a duplicate when its debate is committed, before the stub
        # checks against its resolution apply: their verdicts on it are dropped
        merged = [t for t in state.graph.tensions.values() if t.status is TensionStatus.DUPLICATE]
        assert merged and not any(t.revisit_checks for t in merged)
        graphs.append(relative(state.handles.store, salt))
        calls.append(sorted(c.prompt for c in fake.calls))
        # a level's branches run together, whichever parent they branch from: the
        # sub-branches of the first branch are still asking when those of another begin
        made = [c.meta.debate.removeprefix(salt) for c in fake.calls if c.meta.phase == "respond"]
        first = [i for i, d in enumerate(made) if re.fullmatch(r"/main/b1/b\d", d)]
        other = [i for i, d in enumerate(made) if re.fullmatch(r"/main/b[23]/b\d", d)]
        assert first and other and min(other) < max(first), "sub-branches of two parents at once"
        # the main debate's branches are judged for merging while their sub-branches
        # run (written after them): the pair verdicts do not wait for the levels below
        order = [(c.meta.debate.removeprefix(salt), c.schema) for c in fake.calls]
        pairs = [i for i, (d, schema) in enumerate(order) if schema is PairVerdict and d == "/main"]
        deep = [i for i, (d, _) in enumerate(order) if re.fullmatch(r"/main/b\d/b\d", d)]
        assert pairs and min(pairs) < max(deep), "merges asked beside the level below"
    nodes, edges = graphs[0]
    kinds = " ".join(nodes)
    assert "Synthesis" in kinds and "('Stub',)" in kinds and "/b1/b1 Debate" in kinds, "a rich session"
    assert any(" REFERENCES " in e for e in edges) and any(" SUPERSEDES " in e for e in edges)
    assert any(" DUPLICATES " in e for e in edges), "stubs of different debates judged duplicates"
    assert graphs[0] == graphs[1] == graphs[2]
    assert calls[0] == calls[1] == calls[2]


class SlowSiblings:
    """The main debate's second and third branches slow until the first branch's own
    branches have asked anything, everything else instant. Slow by a margin a busy
    machine's scheduling cannot eat, and only until the question is settled, so the
    test stays quick."""

    def __init__(self) -> None:
        self.children_asked = False

    def __call__(self, call: ScriptedCall) -> float:
        if re.search(r"/main/b1/b\d$", call.meta.debate):
            self.children_asked = True
        slow = re.search(r"/main/b[23]$", call.meta.debate) and not self.children_asked
        return 0.25 if slow else 0.0


def test_a_sub_branch_does_not_wait_for_its_parents_siblings(run_fake: RunSession) -> None:
    """The first branch's sub-branches ask while its slow siblings are still debating,
    and the graph is the one the same session builds with no latency at all."""
    # Slots enough for every debate of a level: with the default few, the fast branch's
    # calls queue behind its slow siblings' in one line, and its sub-branches (a deeper
    # rank) behind theirs, so the order would measure the gate's priority, not the DAG.
    settings = dict(
        max_branches=3, max_depth=2, max_revisits=2, rounds=2, monitor_every="turn", concurrency=16
    )
    _, slow, fake = run_fake(pure, session="slow", delay=SlowSiblings(), **settings)
    # the debates' own calls (a judge's call names the debate it judges for)
    made = [c.meta.debate.removeprefix("slow") for c in fake.calls if c.meta.phase not in ("judge", "merge")]
    children = [i for i, d in enumerate(made) if re.fullmatch(r"/main/b1/b\d", d)]
    sibling = [i for i, d in enumerate(made) if d == "/main/b3"]
    assert children and sibling and min(children) < max(sibling), "b1's branches ran beside b3"
    _, instant, _ = run_fake(pure, session="instant", **settings)
    assert relative(slow.handles.store, "slow") == relative(instant.handles.store, "instant")


def test_a_failing_branch_stops_the_chain_at_once(run_fake: RunSession, store: SQLiteStore) -> None:
    """An error no call can degrade (here a bug in a responder) in a sub-branch ends the
    session when it happens, not when that branch's turn to be committed comes: its
    parent's slow sibling is stopped mid-debate, and what finished is kept."""

    def broken(call: ScriptedCall) -> Any:
        if call.meta.debate.endswith("/main/b1/b1"):
            raise RuntimeError("a bug")
        return pure(call)

    def slow_third(call: ScriptedCall) -> float:
        return 0.2 if call.meta.debate.endswith("/main/b3") else 0.0

    settings = dict(max_branches=3, max_depth=2, rounds=2, monitor_every="turn")
    with pytest.raises(RuntimeError, match="a bug"):
        run_fake(broken, session="broken", delay=slow_third, **settings)
    status = {
        n.id.removeprefix("broken"): n.props["status"]
        for n in store.nodes("broken")
        if n.kind.value == "Debate"
    }
    assert status["/main"] == status["/main/b1"] == "done"
    assert status["/main/b3"] == "running", "the slow sibling was stopped, not waited for"
    session = next(n for n in store.nodes("broken") if n.kind.value == "Session")
    assert session.props["status"] == "failed"


CHECK_S = 0.5  # a duplicate check's time: far above what scheduling on a busy machine adds


def committed(call: ScriptedCall) -> bool:
    """A duplicate check of a debate's commit, not one of a flag judged on arrival
    against the question its branch explores (which is the prompt's first question)."""
    earlier, _ = duplicate_questions(call.prompt)
    return f"Question under debate: {earlier}\n" not in call.prompt


def test_the_last_levels_checks_are_asked_together(run_fake: RunSession) -> None:
    """Branches at --max-depth cannot branch: their commits are one batch, so the
    duplicate checks of all of them are asked at once, not one branch after another."""
    started: list[tuple[float, ScriptedCall]] = []

    def judges_take_time(call: ScriptedCall) -> float:
        started.append((time.monotonic(), call))
        return CHECK_S if call.schema is DuplicateVerdict else 0.0

    # slots for every call at once: a call starts when it is asked, not when one is free
    settings = dict(max_branches=3, max_depth=2, max_revisits=0, rounds=2, monitor_every="turn")
    run_fake(pure, session="batch", delay=judges_take_time, concurrency=64, **settings)
    last = [
        (at, call.meta.debate)
        for at, call in started
        if call.schema is DuplicateVerdict
        and re.search(r"/main/b\d/b\d$", call.meta.debate)
        and committed(call)
    ]
    assert len({debate for _, debate in last}) >= 3, "several last-level debates had candidates"
    times = [at for at, _ in last]
    debates = len({debate for _, debate in last})
    # one batch: asked in a wave or two (a check's verdict can lead to one more), with
    # room for what a busy machine adds; one commit after another, they would be a
    # check's time apart for each debate after the first
    allowed = 3 * CHECK_S
    assert (debates - 1) * CHECK_S > allowed, "enough debates to tell the two apart"
    assert max(times) - min(times) < allowed, "asked together, not one branch after another"


def test_a_familys_merge_is_asked_when_its_branches_are_finished(run_fake: RunSession) -> None:
    """The merge reads the branches' resolutions and nothing their commits change, so
    the main debate's pair verdicts are asked before its second branch is committed
    (whose checks wait for the first branch's), not after the third is."""
    started: list[tuple[float, ScriptedCall]] = []

    def checks_take_time(call: ScriptedCall) -> float:
        """A commit's checks take CHECK_S, so the second branch's commit begins that long
        after the first's: the margin the merge must beat. A flag's check on arrival
        (one after another, in the branch's own time) takes less, to keep the test short."""
        started.append((time.monotonic(), call))
        if call.schema is StubVerdict or (call.schema is DuplicateVerdict and committed(call)):
            return CHECK_S
        return 0.1 if call.schema is DuplicateVerdict else 0.0

    settings = dict(max_branches=3, max_depth=2, max_revisits=0, rounds=2, monitor_every="turn")
    run_fake(pure, session="merge", delay=checks_take_time, concurrency=64, **settings)
    pairs = [at for at, c in started if c.schema is PairVerdict and c.meta.debate == "merge/main"]
    # the second branch's commit: its stubs' duplicate checks, the stub checks of its
    # resolution (a sub-branch b2 is made after these)
    second = [
        at
        for at, c in started
        if (c.schema is DuplicateVerdict and c.meta.debate == "merge/main/b2" and committed(c))
        or (c.schema is StubVerdict and "New text: debate b2:" in c.prompt)
    ]
    assert pairs and second, "the main debate's branches had a pair to judge, the second branch checks"
    # the branches' own calls: the last of them is when the family is finished (a branch
    # whose flags take longer may finish after the second branch's commit has begun, so
    # the commits chain, CHECK_S apart, is what the merge must not wait for)
    family = {f"merge/main/b{i}" for i in (1, 2, 3)}
    own = [
        at
        for at, c in started
        if c.meta.debate in family
        and c.schema is not StubVerdict
        and not (c.schema is DuplicateVerdict and committed(c))
    ]
    finished = max(own)
    if finished < min(second):  # the family was done before the second commit began
        assert min(pairs) < min(second), "merge asked before the second branch was committed"
    # asked within one commit's checks of the last branch's last call, not after the
    # chain of commits (CHECK_S each, one after another) behind it
    assert min(pairs) - finished < CHECK_S, "merge asked when the family finished, not after its commits"


def test_a_debates_calls_wait_with_its_depth(run_fake: RunSession) -> None:
    """Every call of a debate (its turns, its observers) and of a family's merge waits
    for a slot with the debate's depth: a shallower debate has more of the DAG waiting
    for it (llm/gate.py)."""
    ranks: list[tuple[int, ScriptedCall]] = []

    def note_rank(call: ScriptedCall) -> float:
        ranks.append((current_rank(), call))
        return 0.0

    settings = dict(max_branches=3, max_depth=2, max_revisits=2, rounds=2, monitor_every="turn")
    _, state, _ = run_fake(pure, session="rank", delay=note_rank, **settings)
    depth = {d.id: d.depth for d in state.graph.debates.values()}
    own = [(rank, c) for rank, c in ranks if c.meta.phase not in ("judge", "merge", "final", "map", "ledger")]
    assert {depth[c.meta.debate] for _, c in own} == {0, 1, 2}
    assert all(rank == depth[c.meta.debate] for rank, c in own)
    merges = [(rank, c) for rank, c in ranks if c.schema is PairVerdict or c.meta.phase == "merge"]
    assert merges and all(rank == depth[c.meta.debate] + 1 for rank, c in merges)
    # a branch's commit: its checks rank as its turns did
    assert {rank for rank, c in ranks if c.schema is DuplicateVerdict} >= {1, 2}
