"""Merges judged in both orders: a pair of branches is shown to the judge twice, the
blocks and their labels swapped and the prompt otherwise the same; a verdict that
changes with the order is undecided and merges nothing; a group of converging
branches merges only when every pair in it was judged to converge (a pair the
prefilter skipped is asked first), so a group that holds a contradicting pair is not
merged; the merger is given the judge's shared claim and the contradictions, not a
conclusion."""

from __future__ import annotations

from dagmca.debate.events import Event, PairJudged
from dagmca.graph import CallPhase, EdgeType, NodeKind
from dagmca.prompts.schemas import PairVerdict
from dagmca.store.check import check_store
from tests.support.judges import first_shown
from tests.support.sessions import CHANGES, LOWERS, QUESTIONS, RAISES, RunSession, scripted

WORKERS = "Pricing works when revenue funds buses and exemptions protect workers."
LOW_WAGE = "Pricing works when revenue funds buses and exemptions protect low wage workers."


class Record:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def swapped(prompt: str, first: tuple[str, str], second: tuple[str, str]) -> str:
    """`prompt` with the two debates' questions and resolutions exchanged."""
    marks = {v: f"\x00{k}\x00" for k, v in enumerate([*first, *second])}
    for value, mark in marks.items():
        prompt = prompt.replace(value, mark)
    for a, b in ((first[0], second[0]), (first[1], second[1])):
        prompt = prompt.replace(marks[a], b).replace(marks[b], a)
    return prompt


def test_a_judge_biased_to_the_first_block_merges_nothing(run_fake: RunSession) -> None:
    """It answers converge only when b1 is shown first: each pair is asked twice, with
    the blocks and labels swapped and the prompts otherwise identical, and a verdict
    that changes with the order makes no synthesis."""
    answers = {QUESTIONS[0]: WORKERS, QUESTIONS[1]: LOW_WAGE}
    record = Record()
    _, state, fake = run_fake(
        scripted(QUESTIONS[:2], answers, pair=first_shown(WORKERS)),
        max_branches=2, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    b1, b2 = state.graph.debates["s1/main/b1"], state.graph.debates["s1/main/b2"]
    assert (b1.resolution, b2.resolution) == (WORKERS, LOW_WAGE)  # the judge favours b1 first
    st = state.handles.store
    assert st.nodes("s1", NodeKind.SYNTHESIS) == [] and st.edges("s1", EdgeType.MERGES_INTO) == []
    judged = [e for e in record.events if isinstance(e, PairJudged)]
    assert [e.verdict for e in judged] == ["undecided"]
    assert "changes with the order" in judged[0].reason
    assert "b1 shown first, converge" in judged[0].reason and "b2 shown first, unrelated" in judged[0].reason
    calls = [c for c in fake.calls if c.schema is PairVerdict]
    assert len(calls) == 2 * len(judged)
    one, other = (c.prompt for c in calls)
    assert one != other
    pair = ((b1.question, b1.resolution), (b2.question, b2.resolution))
    assert swapped(one, *pair) == other or swapped(other, *pair) == one
    assert {c.meta.phase for c in calls} == {CallPhase.JUDGE}
    assert check_store(st, "s1") == []


def test_an_unbiased_judge_still_merges_and_says_both_orders_agreed(run_fake: RunSession) -> None:
    answers = {QUESTIONS[0]: WORKERS, QUESTIONS[1]: LOW_WAGE}
    _, state, fake = run_fake(
        scripted(QUESTIONS[:2], answers, pair=lambda a, b: "converge"),
        max_branches=2, max_depth=1, max_revisits=0, rounds=1,
    )  # fmt: skip
    [synthesis] = state.handles.store.nodes("s1", NodeKind.SYNTHESIS)
    assert synthesis.props["verdict"] == "converge"
    merger = [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    assert len(merger) == 1
    # the merger gets the judge's shared claim, and no conclusion to reach
    assert (
        "Pricing works when revenue funds buses and exemptions protect"
        in merger[0].prompt.split("<turn>")[-1]
    )
    assert "reached converging resolutions" not in merger[0].prompt


def triangle(a: str, b: str) -> str:
    """b1 (raises) and b3 (does not raise) contradict; each converges with b2 (changes)."""
    if {a, b} == {RAISES, LOWERS}:
        return "contradict"
    return "converge"


def test_a_group_that_holds_a_contradicting_pair_is_never_merged(run_fake: RunSession) -> None:
    answers = {QUESTIONS[0]: RAISES, QUESTIONS[1]: CHANGES, QUESTIONS[2]: LOWERS}
    record = Record()
    _, state, fake = run_fake(
        scripted(QUESTIONS[:3], answers, pair=triangle),
        max_branches=3, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    st = state.handles.store
    judged = sorted(e.verdict for e in record.events if isinstance(e, PairJudged))
    assert judged == ["contradict", "converge", "converge"]  # b1~b2, b2~b3: one component
    assert st.nodes("s1", NodeKind.SYNTHESIS) == [] and st.edges("s1", EdgeType.MERGES_INTO) == []
    assert not [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    [contradicts] = st.edges("s1", EdgeType.CONTRADICTS)
    assert contradicts.props["verdicts"] == "contradict | contradict"
    held = [e for e in record.events if isinstance(e, PairJudged) and e.verdict == "converge"]
    assert all("not merged" in e.reason for e in held)
    assert check_store(st, "s1") == []


def test_the_merger_hears_of_a_members_contradiction(run_fake: RunSession) -> None:
    """b1 and b2 converge, b3 contradicts b1 but is judged unrelated to b2: b1 and b2
    merge, and the merger is told of the contradiction with b3."""

    def rule(a: str, b: str) -> str:
        pair = {a, b}
        if pair == {RAISES, CHANGES}:
            return "converge"
        return "contradict" if pair == {RAISES, LOWERS} else "unrelated"

    answers = {QUESTIONS[0]: RAISES, QUESTIONS[1]: CHANGES, QUESTIONS[2]: LOWERS}
    _, state, fake = run_fake(
        scripted(QUESTIONS[:3], answers, pair=rule),
        max_branches=3, max_depth=1, max_revisits=0, rounds=1,
    )  # fmt: skip
    assert len(state.handles.store.nodes("s1", NodeKind.SYNTHESIS)) == 1
    [merger] = [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    assert "contradict: scripted judge: contradict" in merger.prompt
    assert LOWERS not in merger.prompt.split("What the judge found")[0]  # b3 is not merged


def test_a_pair_undecided_with_a_contradict_in_one_order_holds_its_group(run_fake: RunSession) -> None:
    """b1~b2 and b2~b3 converge; b1 and b3 are judged contradict with b1 shown first and
    converge with b3 first: undecided, but no judge ruled the contradiction out, so the
    three are not merged by transitivity."""

    def rule(a: str, b: str) -> str:
        return "contradict" if (a, b) == (RAISES, LOWERS) else "converge"

    answers = {QUESTIONS[0]: RAISES, QUESTIONS[1]: CHANGES, QUESTIONS[2]: LOWERS}
    record = Record()
    _, state, fake = run_fake(
        scripted(QUESTIONS[:3], answers, pair=rule),
        max_branches=3, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    judged = sorted(e.verdict for e in record.events if isinstance(e, PairJudged))
    assert judged == ["converge", "converge", "undecided"]
    assert state.handles.store.nodes("s1", NodeKind.SYNTHESIS) == []
    assert not [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    held = [e for e in record.events if isinstance(e, PairJudged) and e.verdict == "converge"]
    assert all("not merged" in e.reason for e in held)


CENTRES = "Congestion pricing cuts traffic in city centres."
SUBURBS = "Bus lanes speed commuters through suburbs daily."


def apart(a: str, b: str) -> str:
    """b1 and b3 are unrelated; each converges with b2, which holds both their points."""
    return "unrelated" if {a, b} == {CENTRES, SUBURBS} else "converge"


def test_a_pair_the_prefilter_skipped_is_judged_before_its_group_merges(run_fake: RunSession) -> None:
    """b1 and b3 are too far apart for the prefilter and converge each with b2: b1-b3 is
    asked (in both orders) before the group can merge, and judged unrelated, nothing
    merges across it."""
    answers = {QUESTIONS[0]: CENTRES, QUESTIONS[1]: f"{CENTRES} {SUBURBS}", QUESTIONS[2]: SUBURBS}
    record = Record()
    _, state, fake = run_fake(
        scripted(QUESTIONS[:3], answers, pair=apart),
        max_branches=3, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    judged = [e for e in record.events if isinstance(e, PairJudged)]
    assert sorted(e.verdict for e in judged) == ["converge", "converge", "unrelated"]
    [skipped] = [e for e in judged if e.verdict == "unrelated"]
    assert skipped.similarity < state.handles.config.pair_prefilter  # below the prefilter, yet asked
    by_text = {d.resolution: d.id for d in state.graph.debates.values()}
    assert {skipped.source, skipped.target} == {by_text[CENTRES], by_text[SUBURBS]}
    assert len([c for c in fake.calls if c.schema is PairVerdict]) == 2 * 3  # every pair, both orders
    st = state.handles.store
    assert st.nodes("s1", NodeKind.SYNTHESIS) == [] and st.edges("s1", EdgeType.MERGES_INTO) == []
    assert not [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    held = [e for e in judged if e.verdict == "converge"]
    assert all("not merged" in e.reason and "unrelated" in e.reason for e in held)
    assert check_store(st, "s1") == []


def test_a_group_merges_when_every_pair_in_it_was_judged_to_converge(run_fake: RunSession) -> None:
    """The same three, with b1-b3 judged to converge when asked: one synthesis of the
    three, and the merger hears that each of the three pairs converges."""
    answers = {QUESTIONS[0]: CENTRES, QUESTIONS[1]: f"{CENTRES} {SUBURBS}", QUESTIONS[2]: SUBURBS}
    record = Record()
    _, state, fake = run_fake(
        scripted(QUESTIONS[:3], answers, pair=lambda a, b: "converge"),
        max_branches=3, max_depth=1, max_revisits=0, rounds=1, events=record,
    )  # fmt: skip
    assert len([e for e in record.events if isinstance(e, PairJudged)]) == 3  # b1-b3 asked too
    [synthesis] = state.handles.store.nodes("s1", NodeKind.SYNTHESIS)
    assert len(state.handles.store.edges("s1", EdgeType.MERGES_INTO)) == 3
    [merger] = [c for c in fake.calls if c.meta.phase == CallPhase.MERGE]
    told = merger.prompt.split("What the judge found")[-1]
    assert told.count("as converging") == 3 and "did not compare" not in merger.prompt
    assert synthesis.props["verdict"] == "converge"
