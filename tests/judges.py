"""A scripted judge for the fake LLM: it reads the texts a judge prompt quotes and
answers by rules a test gives, as a real judge would decide on the texts."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dagmca.llm.fake import ScriptedCall
from dagmca.prompts.schemas import DuplicateVerdict, PairVerdict, StubVerdict

_QUOTED = r":\n<turn>\n(.*?)\n</turn>"
PairRule = Callable[[str, str], str]  # (resolution A, resolution B) -> verdict
StubRule = Callable[[str, str], tuple[str, str]]  # (question, text) -> (verdict, answering sentence)
DuplicateRule = Callable[[str, str], bool]  # (earlier question, later question) -> same?


def pair_texts(prompt: str) -> tuple[str, str]:
    a = re.search(r"Debate A, on: .*?" + _QUOTED, prompt, re.S)
    b = re.search(r"Debate B, on: .*?" + _QUOTED, prompt, re.S)
    assert a and b, "not a pair judge's prompt"
    return a.group(1), b.group(1)


def stub_parts(prompt: str) -> tuple[str, str]:
    text = re.search(r"New text: .*?" + _QUOTED, prompt, re.S)
    question = re.search(r"An open question left by an earlier debate: (.*)\n", prompt)
    assert text and question, "not a stub judge's prompt"
    return question.group(1), text.group(1)


def duplicate_questions(prompt: str) -> tuple[str, str]:
    found = re.search(r"\nA: (.*)\nB: (.*)\nJudge whether they are one question", prompt)
    assert found, "not a duplicate judge's prompt"
    return found.group(1), found.group(2)


def same_words(a: str, b: str) -> bool:
    """One question when it is the same words, whatever the case and punctuation."""
    return re.findall(r"\w+", a.lower()) == re.findall(r"\w+", b.lower())


def same_text(a: str, b: str) -> str:
    """Converge when the two resolutions say the same; otherwise unrelated."""
    return "converge" if a.strip() == b.strip() else "unrelated"


def never_answered(question: str, text: str) -> tuple[str, str]:
    return "open", ""


def judge_reply(
    call: ScriptedCall,
    pair: PairRule = same_text,
    stub: StubRule = never_answered,
    duplicate: DuplicateRule = same_words,
) -> Any:
    """The judge's reply to `call`, or None when it is not a judge's call."""
    if call.schema is PairVerdict:
        a, b = pair_texts(call.prompt)
        verdict = pair(a, b)
        return {
            "verdict": verdict,
            "shared_claim": a.split(".")[0] if verdict in ("converge", "elaborate") else "",
            "reason": f"scripted judge: {verdict}",
        }
    if call.schema is StubVerdict:
        question, text = stub_parts(call.prompt)
        verdict, sentence = stub(question, text)
        return {"verdict": verdict, "answering_sentence": sentence, "reason": f"scripted judge: {verdict}"}
    if call.schema is DuplicateVerdict:
        verdict = "duplicate" if duplicate(*duplicate_questions(call.prompt)) else "distinct"
        return {"verdict": verdict, "reason": f"scripted judge: {verdict}"}
    return None
