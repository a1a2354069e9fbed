"""Judged reasons that say nothing: under three words, or a copy of the field's
description, are asked again once, then kept marked degenerate."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from dagmca.graph import CallPhase, CallRecord, Phase
from dagmca.llm.base import CallMeta, Completion, LLMClient, Message, Request
from dagmca.llm.degenerate import field_descriptions, reason_degeneration
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.stack.reasons import Reasons, hollow_reason, reasons_of
from dagmca.prompts.schemas import PairVerdict

PROMPT: list[Message] = [
    {
        "role": "user",
        "content": "<turn>\nA says the councils pay.\n</turn>\nReply with one JSON object: verdict; "
        "and reason, one or two sentences that name what decides the verdict.",
    }
]
SOUND = "Both resolutions say the councils pay for the buses, in other words."


class Replies(LLMClient):
    """Answers each structured call with the next reason of `reasons`, and records what it was asked."""

    model = "scripted"

    def __init__(self, *reasons: str) -> None:
        self.reasons = list(reasons)
        self.asked: list[tuple[float, int | None, CallMeta | None]] = []

    async def complete(self, request: Request) -> Completion:
        self.asked.append((request.temperature, request.seed, request.meta))
        reason = self.reasons.pop(0)
        if request.schema is None:
            return Completion(text=reason)
        parsed = PairVerdict(verdict="converge", shared_claim="The councils pay.", reason=reason)
        return Completion(text=parsed.model_dump_json(), parsed=parsed)


def ask(
    client: LLMClient, phase: str = CallPhase.JUDGE, schema: type[BaseModel] | None = PairVerdict
) -> Completion:
    meta = CallMeta(agent="judge", phase=phase)
    return asyncio.run(client.complete(Request(PROMPT, schema=schema, max_tokens=100, seed=3, meta=meta)))


def test_what_makes_a_reason_hollow() -> None:
    described = field_descriptions(PROMPT[0]["content"], ["reason"])
    assert described == ["one or two sentences that name what decides the verdict"]
    assert reason_degeneration("one sentence", described) == "under 3 words"
    assert reason_degeneration("", described) == "empty"
    assert reason_degeneration("one or two sentences that name what decides the verdict", described)
    assert reason_degeneration("Two sentences that name what decides it.", described) is not None
    assert reason_degeneration("A short claim", ["A short claim about it."]) is not None
    assert reason_degeneration(SOUND, described) is None
    # a reason may use the words of the texts it judges: those are no description
    assert reason_degeneration("A says the councils pay, B agrees.", described) is None
    # a placeholder filled and padded, as the bundled model wrote on README command (1)
    assert reason_degeneration("one sentence from this paragraph.", described) == (
        "names its own form, not a reason"
    )
    assert reason_degeneration("One sentence describing how this decision leads on.", []) is not None
    assert reason_degeneration("One sentence in the passage says the opposite.", described) is None
    assert reasons_of(PairVerdict(verdict="converge", shared_claim="x", reason="why")) == [("reason", "why")]


def test_a_hollow_reason_is_asked_again_once_with_varied_sampling() -> None:
    inner = Replies("one sentence", SOUND)
    done = ask(Reasons(inner))
    assert done.parsed.reason == SOUND and not done.degenerate
    assert len(inner.asked) == 2
    (t0, s0, m0), (t1, s1, m1) = inner.asked
    assert m0 is not None and m1 is not None and not m0.reask and m1.reask
    assert t1 > t0 and s1 != s0


def test_a_reason_still_hollow_is_kept_marked_degenerate() -> None:
    inner = Replies("converge", "one or two sentences that name what decides the verdict")
    done = ask(Reasons(inner))
    assert len(inner.asked) == 2
    assert done.degenerate.startswith("its reason")
    assert hollow_reason(done.parsed, PROMPT, PairVerdict) is not None


def test_a_sound_reason_costs_no_second_call() -> None:
    inner = Replies(SOUND)
    assert not ask(Reasons(inner)).degenerate
    assert len(inner.asked) == 1


def test_the_session_client_guards_judged_calls_only_and_accounts_each_try() -> None:
    """Through the session's client: a judge-role call (merge verdicts, stub checks, the
    ledger, an eval's pair) is guarded and each try is a call record, the second a
    re-ask; an observer's or a debater's call is not guarded."""
    records: list[CallRecord] = []
    inner = Replies("one sentence", SOUND, "ok", "fine")
    llm = MeteredLLM(inner, concurrency=2, record=records.append)
    assert ask(llm, CallPhase.JUDGE).parsed.reason == SOUND
    assert [r.reask for r in records] == [False, True]
    assert ask(llm, CallPhase.MONITOR).parsed.reason == "ok"
    assert ask(llm, Phase.RESPOND.value, schema=None).text == "fine"
    assert len(inner.asked) == 4


def test_an_eval_verdict_whose_reasoning_stays_hollow_is_stored_marked() -> None:
    from dagmca.evaluation.graph import judged_edges
    from dagmca.evaluation.judging import PairJudgement, judge_pair

    class Judge(LLMClient):
        model = "scripted"

        async def complete(self, request: Request) -> Completion:
            parsed = PairJudgement(reasoning="A", verdict="A")
            return Completion(text=parsed.model_dump_json(), parsed=parsed)

    llm = MeteredLLM(Judge(), concurrency=2)
    result = asyncio.run(
        judge_pair(llm, question="Q?", passage=None, answer="x", baseline="y", max_tokens=50, seed=0)
    )
    assert all(v.degenerate for v in result.orders)
    edges = judged_edges("e", "a/final", "b/final", result, 0)
    assert edges and all(e.props.get("degenerate") is True for e in edges)
