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


def first_shown(text: str, verdict: str = "converge", otherwise: str = "unrelated") -> PairRule:
    """A position-biased judge: `verdict` only when the resolution `text` is the one
    shown first (debate A), `otherwise` when it comes second; the judge the pair's two
    orders are there to catch."""
    return lambda a, b: verdict if a.strip() == text.strip() else otherwise


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


# -- the emergence ledger's judge ----------------------------------------------------------
SplitRule = Callable[[str], list[str]]  # the traced text -> its claims
ClaimRule = Callable[[str, str], tuple[str, str]]  # (claim, a candidate text) -> (verdict, sentence)


def ledger_split_text(prompt: str) -> str:
    """The text a ledger split prompt quotes."""
    found = re.search(r"\n(?:The final answer|A synthesis.*?|The resolution of .*?)" + _QUOTED, prompt, re.S)
    assert found, "not a ledger split prompt"
    return found.group(1)


def ledger_candidates(prompt: str) -> tuple[str, list[str]]:
    """The claim a ledger verdict prompt traces, and its numbered candidate texts."""
    claim = re.search(r"\nThe claim to trace: (.*)\n", prompt)
    # a text too long for the window is left out whole: it reads as empty
    found = re.findall(r"\nText \d+, [^\n]*?(?::\n<turn>\n(.*?)\n</turn>|: \[left out[^\]]*\])", prompt, re.S)
    assert claim and found, "not a ledger verdict prompt"
    return claim.group(1), list(found)


def sentences_of(text: str) -> list[str]:
    """A text's sentences and list items, as a scripted model would split it."""
    found = (s.strip(" -;\t") for s in re.split(r"(?<=[.!?])\s+|\n+", text))
    return [s if s.endswith((".", "!", "?")) else f"{s}." for s in found if len(s.split()) >= 3]


def ledger_reply(call: ScriptedCall, split: SplitRule, claim_rule: ClaimRule) -> Any:
    """The ledger judge's reply to `call`, or None when it is not a ledger call."""
    if call.schema is None:
        return None
    if call.schema.__name__ == "Claims":
        return {"claims": split(ledger_split_text(call.prompt))}
    if call.schema.__name__ == "SourceVerdicts":
        claim, texts = ledger_candidates(call.prompt)
        verdicts = []
        for i, text in enumerate(texts, start=1):
            verdict, sentence = claim_rule(claim, text)
            reason = f"scripted judge: {verdict}" + (f", by '{sentence}'" if sentence else "")
            verdicts.append({"text": i, "verdict": verdict, "sentence": sentence, "reason": reason})
        return {"verdicts": verdicts}
    return None


def verbatim(claim: str, text: str) -> tuple[str, str]:
    """states when the text has the claim word for word; otherwise unrelated."""
    return ("states", claim) if claim.rstrip(".") in text else ("unrelated", "")
