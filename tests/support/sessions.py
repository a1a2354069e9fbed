"""A scripted session's script: the questions its observers flag, the flags, and a
responder that flags them, answers branches and judges by rule; texts the tests' turns say."""

from __future__ import annotations

from typing import Any

from dagmca.llm.fake import ScriptedCall
from tests.conftest import excerpt_of
from tests.support.judges import PairRule, StubRule, judge_reply, never_answered, same_text

QUESTIONS = [
    "Is a flat charge fair to low wage workers",
    "Does traffic simply move to poorer neighbourhoods",
    "Can revenue be protected from future councils",
    "Would shops in the centre lose suburban visitors",
    "Are predictions of public reaction reliable at all",
]


def flag(question: str, urgency: float = 0.8, category: str = "gap", excerpt: str = "") -> dict[str, Any]:
    return {
        "category": category,
        "urgency": urgency,
        "question": question,
        "excerpt": excerpt,
        "rationale": "r",
    }


def no_flag() -> dict[str, Any]:
    return flag("", 0.0)


def scripted(
    main_flags: list[str],
    branch_answers: dict[str, str] | None = None,
    *,
    pair: PairRule = same_text,
    stub: StubRule = never_answered,
) -> Any:
    """Main-debate observers flag `main_flags` (one per check, in order); a branch's
    turns answer with branch_answers[its question] (default: its question); the judge
    decides by `pair` and `stub` (tests/support/judges.py)."""
    pending = list(main_flags)

    def respond(call: ScriptedCall) -> Any:
        verdict = judge_reply(call, pair, stub)
        if verdict is not None:
            return verdict
        if call.schema is not None:
            if call.meta.debate.endswith("/main") and pending:
                return flag(pending.pop(0), excerpt=excerpt_of(call))
            return no_flag()
        for question, answer in (branch_answers or {}).items():
            if call.meta.debate.count("/b") and f"Question under debate: {question}" in call.prompt:
                return answer
        return f"{call.meta.agent} says something about {call.meta.phase} number {len(call.prompt) % 97}."

    return respond


# A claim about the prices of shops in the centre, a paraphrase of it and its negation.
RAISES = "A congestion charge raises the prices that shops in the centre must charge their customers."

CHANGES = "A congestion charge changes the prices that shops in the centre must charge their customers."

LOWERS = "A congestion charge does not raise the prices that shops in the centre must charge their customers."


TOPIC = "Whether shops in the centre would lose suburban visitors is what the traders keep asking about."
