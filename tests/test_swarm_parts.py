"""The swarm's parts on hand-made inputs: an agent's prompt, the routers, S and its
noise floor."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import pytest

from dagmca.llm.tokens import TokenCounter
from dagmca.swarm.agents import Agent, ContextOptions, Example, messages
from dagmca.swarm.metrics import noise_floor, window_counts
from dagmca.swarm.routers import new_router, pick
from dagmca.swarm.tasks import SwarmTask

TASK = SwarmTask(id="q", type="math", question="What is 6 * 7?", answer="42")


def _agent() -> Agent:
    return Agent(
        "a",
        [
            Example("math", "What is 1 + 1?", "Answer: 2", True, 0),
            Example("words", "Spell cat backwards.", "Answer: tac", True, 1),
            Example("math", "What is 2 + 2?", "Answer: 4", True, 2),
            Example("math", "What is 3 + 3?", "Answer: 7", False, 3),
        ],
    )


def test_the_prompt_is_system_then_own_examples_same_type_first_then_the_task() -> None:
    shown = messages(_agent(), TASK, ContextOptions(examples=3), TokenCounter())
    users = [m["content"] for m in shown if m["role"] == "user"]
    assert shown[0]["role"] == "system"
    assert users == ["What is 2 + 2?", "What is 1 + 1?", "Spell cat backwards.", "What is 6 * 7?"]
    by_recency = messages(_agent(), TASK, ContextOptions(examples=3, weighting="recency"), TokenCounter())
    assert [m["content"] for m in by_recency if m["role"] == "user"][:3] == [
        "What is 2 + 2?",
        "Spell cat backwards.",
        "What is 1 + 1?",
    ]


def test_the_examples_are_capped_in_tokens_and_failures_shown_only_when_asked() -> None:
    counter = TokenCounter()
    one_pair = counter.count("What is 2 + 2?") + counter.count("Answer: 4")
    capped = messages(_agent(), TASK, ContextOptions(examples=3, max_tokens=one_pair), counter)
    assert len(capped) == 4  # system, one example (question and answer), the task
    assert not any("wrong" in m["content"] for m in messages(_agent(), TASK, ContextOptions(), counter))
    negative = messages(_agent(), TASK, ContextOptions(negatives=1), counter)
    assert any(m["content"].endswith("(This answer was wrong.)") for m in negative)


def test_routers_follow_the_record() -> None:
    agents = ["a", "b", "c"]
    for kind in ("greedy", "thompson", "affinity"):
        router = new_router(kind, agents, seed=3, temperature=0.05)
        for _ in range(20):
            router.update("math", "b", True)
            router.update("math", "a", False)
        picks = Counter(pick(router, kind, "math", f"k{i}") for i in range(200))
        assert picks.most_common(1)[0][0] == "b", (kind, picks)
    rr = new_router("round-robin", agents, seed=0, temperature=1.0)
    assert [pick(rr, "round-robin", "math", str(i)) for i in range(4)] == ["a", "b", "c", "a"]
    drawn = {pick(new_router("thompson", agents, 1, 1.0), "thompson", "t", str(i)) for i in range(60)}
    assert drawn == set(agents)  # with no record, Thompson explores every agent


def test_s_is_over_the_window_and_its_noise_floor_is_chance() -> None:
    agents = [Agent(n) for n in "abcd"]
    types = ["w", "x", "y", "z"]
    for position in range(200):
        t = types[position % 4]
        # before 100 every agent takes every type; after, each takes one
        owner = agents[position % 4] if position >= 100 else agents[(position // 4) % 4]
        owner.examples.append(Example(t, f"q{position}", "a", True, position))
    from dagmca.metrics.measures import specialization

    late = window_counts(agents, 100)
    early = window_counts([Agent(a.name, [e for e in a.examples if e.position < 100]) for a in agents], 0)
    assert specialization(late, types) == 1.0
    assert (specialization(early, types) or 0) < 0.1
    floor = noise_floor(late, types, seed=1)
    assert floor is not None and 0 < floor < 0.5


def test_a_plot_with_no_d_values_says_so_without_a_warning_or_an_empty_legend(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from dagmca.swarm.plot import write_outputs
    from dagmca.swarm.report import Curve, RouterRow, SwarmReport

    row = RouterRow(
        router="affinity", repeats=1, tasks=2, accuracy=0.5, accuracy_ci=(0.1, 0.9), s=None, s_ci=None,
        s_noise=None, d=None, f_p=None, tokens=10, record={"a0": {"add": [2, 1]}},
    )  # fmt: skip
    # one agent took every task: S and D have no value at any snapshot
    curve = Curve(router="affinity", seen=[1, 2], accuracy=[[1.0, 0.5]], s=[[None, None]], d=[[None, None]])
    report = SwarmReport(
        swarm_id="s", tasks=2, agents=["a0"], types=["add"], routers=[row], comparisons=[], curves=[curve],
        attempted_now=2,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of a legend with nothing to label
        written = write_outputs(report, tmp_path)
    assert {p.name for p in written} == {"swarm.json", "swarm-curves.png", "swarm-affinity.png"}
