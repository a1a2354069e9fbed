"""Scripted judges of an eval's pairs (the PairJudgement schema), each reading the two
answers the pair prompt quotes as a real judge would see them, and a scripted writer
for the judge check's battery (its answers, padded restatements and near misses)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dagmca.evaluation.judgecheck.battery import NearMiss, OwnAnswer
from dagmca.evaluation.judging import PairJudgement
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder

_ANSWER = re.compile(r"Answer (A|B):\n<answer>\n(.*?)\n</answer>", re.S)
_REFERENCE = re.compile(r"Reference answer \(correct\):\n<reference>\n(.*?)\n</reference>", re.S)


def shown(call: ScriptedCall) -> tuple[str, str]:
    """The two answers a pair prompt shows, A then B."""
    found = dict(_ANSWER.findall(call.messages[-1]["content"]))
    return found["A"], found["B"]


def verdict(label: str, why: str) -> dict[str, Any]:
    return {"reasoning": why, "verdict": label}


def first_always(call: ScriptedCall) -> dict[str, Any]:
    """Position bias at its worst: whatever is shown first wins."""
    return verdict("A", "Answer A sets out the reasoning more convincingly than answer B does")


def longer_always(call: ScriptedCall) -> dict[str, Any]:
    """Length bias at its worst: the longer answer wins, in either order."""
    a, b = shown(call)
    label = "A" if len(a.split()) > len(b.split()) else "B" if len(b.split()) > len(a.split()) else "tie"
    return verdict(label, "the longer answer covers the question in more detail than the other one")


def reads_reference(call: ScriptedCall) -> dict[str, Any]:
    """A judge that holds each answer to the reference: the one whose last line states
    it wins; without a reference, neither does."""
    ref = _REFERENCE.search(call.messages[-1]["content"])
    if ref is None:
        return verdict("tie", "both answers say the same thing, at different lengths")
    a, b = shown(call)
    final = ref.group(1).strip()
    right = [label for label, text in (("A", a), ("B", b)) if text.rstrip(".").endswith(final)]
    label = right[0] if len(right) == 1 else "tie"
    return verdict(label, f"the reference gives {final}, and only one answer reaches it")


_REACH = re.compile(r"The correct final answer is: (.*?)\. Write an answer")
_MISS = re.compile(r"so that it reaches (.*?) instead")
_QUOTED = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)


def writer(call: ScriptedCall) -> Any:
    """The battery's writer, as a capable model would follow its prompts: an answer that
    reaches the reference it is given, the same answer said twice over, and a copy
    whose last step slips to the near miss it is given."""
    prompt = call.messages[-1]["content"]
    agent = call.meta.agent
    if call.schema is OwnAnswer:  # each model's own way to a wrong answer, named after its writer
        return {"text": f"Working it through step by step, the answer is {agent}.", "answer": agent}
    if call.schema is NearMiss:
        return {"reasoning": "a slip in the last step", "answer": "a near miss"}
    if agent == "writer":
        reach = _REACH.search(prompt)
        final = reach.group(1) if reach else "as the question asks"
        return f"Taking the figures in order and working through each step, the answer is {final}."
    if agent == "padder":
        text = _QUOTED.search(prompt)
        assert text is not None
        return f"{text.group(1)} To put the same point again in other words: {text.group(1)}"
    if agent == "misser":
        text, near = _QUOTED.search(prompt), _MISS.search(prompt)
        assert text is not None and near is not None
        return text.group(1).rsplit("the answer is", 1)[0] + f"the answer is {near.group(1)}."
    return default_responder(call)


def battery(judge: Callable[[ScriptedCall], Any], model: str = "scripted") -> ScriptedLLM:
    """A scripted model that writes the battery's answers and judges its pairs by `judge`
    (`model`: its name, which the response cache keys its replies by)."""
    return ScriptedLLM(
        lambda call: judge(call) if call.schema is PairJudgement else writer(call), model=model
    )
