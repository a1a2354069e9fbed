"""The prompts that align several sessions of one passage (`dagmca stability`): the
frame every one of them carries, and the claims' question. Two tensions are asked the
duplicate-question prompt of a session's own stubs (`templates.judge_duplicate`): whether
two open questions are one is the same judgment across sessions as within one.

The passage goes whole into the frame when it fits the judge's share of its window, as
a session's prompts take it; a longer one is named, not cut: the two texts judged are
short, and what decides is what they say, which they carry themselves."""

from __future__ import annotations

from dagmca.prompts.budget import Part, Prompt, PromptBudget
from dagmca.prompts.templates import JUDGE_ROLE, MAIN_QUESTION, Frame, messages, passage_block
from dagmca.prompts.text import fence

# moved whenever a prompt here (or the duplicate prompt it reuses) changes what a
# judge can answer: findings aligned under another version are another study's
ALIGN_PROMPT_VERSION = "align-1"
LONG_PASSAGE = "(the passage: too long to quote here; both texts below come from debates about it)"


def study_frame(passage: str, question: str | None, budget: PromptBudget, share: float) -> Frame:
    """The frame of a study's judge: the passage whole when it takes at most `share` of
    the judge's window (less its reply), else named; the question the sessions debated."""
    block = passage_block(passage)
    room = share * budget.available(budget.flag)
    shown = block if budget.counter.count(block) <= room else fence("passage", LONG_PASSAGE)
    return Frame(question=question or MAIN_QUESTION, passage=shown, budget=budget)


def judge_same_claim(frame: Frame, first: str, second: str) -> Prompt:
    """Two claims of two sessions' final answers: do they state the same thing?"""
    parts: list[Part] = [
        "Two claims, each from the final answer of a separate debate about the passage:\n"
        f"A: {first}\nB: {second}\n"
        "Judge whether they state the same thing:\n"
        "- same: each says what the other says, in whatever words, so that one is true "
        "exactly when the other is;\n"
        "- different: one adds, drops, narrows or reverses something the other says (claims "
        "that share almost every word but differ in a negation, a quantity, a party or a "
        "direction are different; so are a claim and a weaker or stronger one).\n"
        "Reply with one JSON object: reason, one or two sentences that name what decides "
        "the verdict; and then the verdict.",
    ]
    return messages(frame, parts, frame.budget.flag, JUDGE_ROLE, frame.judging)
