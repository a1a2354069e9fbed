"""A scripted session that meets every DAG success criterion: three branches, two that
converge and cite each other, one that answers a stub, and a synthesis that makes another
stub relevant (`responder` with `CRITERIA_SETTINGS`)."""

from __future__ import annotations

import hashlib
from typing import Any

from dagmca.llm.fake import ScriptedCall
from tests.support.judges import judge_reply
from tests.support.sessions import QUESTIONS, excerpt_of

CONVERGED = "Pricing works when revenue funds buses and exemptions protect workers. See [B1] and [B2]."

URGENCY = {0: 0.9, 1: 0.85, 2: 0.8, 3: 0.5, 4: 0.45}

ANSWERS = {
    QUESTIONS[0]: CONVERGED,
    QUESTIONS[1]: CONVERGED,
    QUESTIONS[2]: "Would shops in the centre lose suburban visitors? Yes, some shops would.",
    QUESTIONS[4]: "Polls mislead; public reaction follows experience of the charge.",
}

SYNTHESIS = (
    "Are predictions of public reaction reliable? Pricing works when revenue funds buses and "
    "exemptions protect workers."
)


def pair_rule(a: str, b: str) -> str:
    return "converge" if a == b else "contradict"


def stub_rule(question: str, text: str) -> tuple[str, str]:
    if question == QUESTIONS[3] and "Yes, some shops would." in text:
        return "answered", "Yes, some shops would."
    if question == QUESTIONS[4] and text.startswith("Are predictions of public reaction reliable"):
        return "relevant", ""
    return "open", ""


def responder(call: ScriptedCall) -> Any:
    h = hashlib.sha256(call.prompt.encode()).digest()
    verdict = judge_reply(call, pair_rule, stub_rule)
    if verdict is not None:
        return verdict
    if call.schema is not None:  # an observer
        if call.meta.debate.endswith("/main"):
            # a new angle: the first question, from one the prompt picks, that the
            # debate's tensions already flagged (listed in the prompt) do not ask
            flagged = call.prompt.split("Tensions already flagged in this debate:")[-1]
            start = h[0] % 5
            k = next((j % 5 for j in range(start, start + 5) if QUESTIONS[j % 5] not in flagged), start)
            return {
                "category": ("gap", "assumption", "contradiction", "open_question", "meta")[k],
                "urgency": URGENCY[k],
                "question": QUESTIONS[k],
                "excerpt": excerpt_of(call),
                "rationale": "r",
            }
        topic = call.meta.debate.rsplit("/", 1)[-1]
        return {
            "category": "gap",
            "urgency": 0.4,
            "question": f"What does {topic} leave open, point {h[0] % 3}?",
            "excerpt": excerpt_of(call),
            "rationale": "r",
        }
    if call.meta.agent == "merger":
        return SYNTHESIS
    for question, answer in ANSWERS.items():
        if f"Question under debate: {question}" in call.prompt and "/main/" in call.meta.debate:
            return answer
    return f"{call.meta.agent} on {call.meta.phase}: {h.hex()[:12]}"


# With `responder`: three branches, two that converge and cite each other, one that
# answers a stub, and a synthesis that makes another stub relevant.
CRITERIA_SETTINGS: dict[str, Any] = {
    "max_branches": 3,
    "max_depth": 1,
    "max_revisits": 1,
    "rounds": 2,
    "strategy": "urgent",
    "monitor_every": "turn",
    "pair_prefilter": 0.0,
    "stub_prefilter": 0.0,
}
