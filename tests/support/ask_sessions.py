"""The two stored sessions the ask tests read: s1, three branches that converge and
contradict about fairness (`run_fairness`); s2, two contradicting branches about prices,
an open stub and a turn naming an ordinance (`run_prices`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dagmca.llm.fake import ScriptedCall
from dagmca.store.sqlite import SQLiteStore
from tests.support.judges import judge_reply
from tests.support.sessions import QUESTIONS, excerpt_of, flag, no_flag, run_scripted

# s1: three branches; A and B converge, B and C converge, A and C contradict: a group
# that holds a contradiction is not merged, so the contradiction stays dissent (a session
# stored before that rule merged all three, reconciling it).
FAIR_A = "Exemptions for low wage workers make the flat charge fair. [zero] [one]"

FAIR_B = "Bus revenue that funds the exemptions keeps the charge fair to workers. [one] [two]"

FAIR_C = "Councils will raid the revenue, so the exemptions for workers will not last. [two] [not-zero]"

SYNTHESIS = "Exemptions funded by bus revenue keep the charge fair while councils keep the revenue."

# s2: two branches that contradict each other and no synthesis, an open stub, and a
# turn that names an ordinance by a code.
PRICES_Q = "Does the toll raise prices at shops in the centre"

ABSORB_Q = "Do shops pass the toll on to their customers"

STUB_Q = QUESTIONS[3]  # "Would shops in the centre lose suburban visitors"

RAISE = "The toll raises the prices that shops in the centre charge. [three]"

ABSORB = "Shops absorb the toll, and prices in the centre do not rise. [not-three]"

CODE_TURN = "The council's Ordinance QX-4471 fixes the charge at four pounds a day."

SETTINGS: dict[str, Any] = {
    "max_depth": 1,
    "max_revisits": 0,
    "rounds": 1,
    "strategy": "urgent",
    "pair_prefilter": 0.0,
    "stub_prefilter": 0.0,
}


def markers(text: str) -> set[str]:
    return set(re.findall(r"\[([\w-]+)\]", text))


def marker_judge(a: str, b: str) -> str:
    """Contradict when one says not-X of the other's X; converge on a shared marker."""
    ma, mb = markers(a), markers(b)
    if {f"not-{m}" for m in ma} & mb or {f"not-{m}" for m in mb} & ma:
        return "contradict"
    return "converge" if ma & mb else "unrelated"


def session_responder(flags: list[tuple[str, float]], answers: dict[str, str]) -> Any:
    """The main debate's observers flag `flags` in order, each with its urgency; a
    branch answers answers[its question]; the judge decides by markers."""
    pending = list(flags)

    def respond(call: ScriptedCall) -> Any:
        verdict = judge_reply(call, marker_judge)
        if verdict is not None:
            return verdict
        main = call.meta.debate.endswith("/main")
        if call.schema is not None:
            return flag(*pending.pop(0), excerpt=excerpt_of(call)) if main and pending else no_flag()
        if call.meta.agent == "merger":
            return SYNTHESIS
        for question, answer in answers.items():
            if "/b" in call.meta.debate and f"Question under debate: {question}" in call.prompt:
                return answer
        if call.meta.debate == "s2/main" and call.meta.agent == "L1N2" and call.meta.phase == "respond":
            return CODE_TURN
        return f"{call.meta.agent} says something about {call.meta.phase} number {len(call.prompt) % 97}."

    return respond


def run_fairness(store: SQLiteStore, out: Path) -> None:
    flags = [(QUESTIONS[0], 0.9), (QUESTIONS[1], 0.85), (QUESTIONS[2], 0.8)]
    answers = {QUESTIONS[0]: FAIR_A, QUESTIONS[1]: FAIR_B, QUESTIONS[2]: FAIR_C}
    run_scripted(store, out, session_responder(flags, answers), session="s1", max_branches=3, **SETTINGS)


def run_prices(store: SQLiteStore, out: Path) -> None:
    flags = [(PRICES_Q, 0.9), (ABSORB_Q, 0.85), (STUB_Q, 0.5)]
    answers = {PRICES_Q: RAISE, ABSORB_Q: ABSORB}
    run_scripted(store, out, session_responder(flags, answers), session="s2", max_branches=2, **SETTINGS)
