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


# a numbered text of a ledger prompt (text 0, a quoted passage excerpt, is read apart)
_NUMBERED = re.compile(r"\nText [1-9]\d*, [^\n]*?(?::\n<turn>\n(.*?)\n</turn>|: \[left out[^\]]*\])", re.S)


def ledger_candidates(prompt: str) -> tuple[str, list[str]]:
    """The claim a ledger verdict prompt traces, and its numbered candidate texts."""
    claim = re.search(r"\nThe claim to trace: (.*)\n", prompt)
    # a text too long for the window is left out whole: it reads as empty
    found = _NUMBERED.findall(prompt)
    assert claim and (found or "Text 0 is the passage" in prompt), "not a ledger verdict prompt"
    return claim.group(1), list(found)


def sentences_of(text: str) -> list[str]:
    """A text's sentences and list items, as a scripted model would split it."""
    found = (s.strip(" -;\t") for s in re.split(r"(?<=[.!?])\s+|\n+", text))
    return [s if s.endswith((".", "!", "?")) else f"{s}." for s in found if len(s.split()) >= 3]


EntailRule = Callable[[str, list[str]], list[tuple[int, str]]]  # (claim, texts) -> [(number, sentence)]


def follows_from_nothing(claim: str, texts: list[str]) -> list[tuple[int, str]]:
    """An entailment judge for which no claim that no text states follows."""
    return []


def prompt_passage(prompt: str) -> str:
    """The passage at the top of a prompt; in a ledger prompt that quotes the passage's
    sentences as text 0 (a long passage, whose prompts carry its map), those."""
    quoted = re.search(r"\nText 0, [^\n]*?:\n<turn>\n(.*?)\n</turn>", prompt, re.S)
    if quoted:
        return quoted.group(1)
    found = re.search(r"<passage>\n(.*?)\n</passage>", prompt, re.S)
    assert found, "no passage in the prompt"
    return found.group(1)


def ledger_entailment(prompt: str) -> tuple[str, list[str]]:
    """The claim an entailment check asks about, and its texts by number: 0 the passage
    (empty when the prompt offers none), then the numbered texts."""
    claim = re.search(r"\nThe claim to check: (.*)\n", prompt)
    found = _NUMBERED.findall(prompt)
    assert claim, "not an entailment check"
    passage = prompt_passage(prompt) if "Text 0 is the passage" in prompt else ""
    return claim.group(1), [passage, *found]


def ledger_reply(
    call: ScriptedCall, split: SplitRule, claim_rule: ClaimRule, entail: EntailRule = follows_from_nothing
) -> Any:
    """The ledger judge's reply to `call`, or None when it is not a ledger call. The
    passage (text 0, when the prompt offers it) is judged by `claim_rule` like a text;
    an entailment check answers by `entail`."""
    if call.schema is None:
        return None
    if call.schema.__name__ == "Claims":
        return {"claims": split(ledger_split_text(call.prompt))}
    if call.schema.__name__ == "SourceVerdicts":
        claim, texts = ledger_candidates(call.prompt)
        numbered = list(enumerate(texts, start=1))
        if "Text 0 is the passage" in call.prompt:
            numbered.insert(0, (0, prompt_passage(call.prompt)))
        verdicts = []
        for i, text in numbered:
            verdict, sentence = claim_rule(claim, text)
            reason = f"scripted judge: {verdict}" + (f", by '{sentence}'" if sentence else "")
            verdicts.append({"text": i, "verdict": verdict, "sentence": sentence, "reason": reason})
        return {"verdicts": verdicts}
    if call.schema.__name__ == "Entailment":
        claim, texts = ledger_entailment(call.prompt)
        support = [{"text": i, "sentence": sentence} for i, sentence in entail(claim, texts)]
        verdict = "follows" if support else "does_not_follow"
        return {"support": support, "reason": f"scripted judge: {verdict}", "verdict": verdict}
    return None


def verbatim(claim: str, text: str) -> tuple[str, str]:
    """states when the text has the claim word for word; otherwise unrelated."""
    return ("states", claim) if claim.rstrip(".") in text else ("unrelated", "")
