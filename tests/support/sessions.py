"""A scripted session: the passage the tests debate, the questions its observers flag,
the flags, and a responder that flags them, answers branches and judges by rule; texts
the tests' turns say; and a whole session run on the scripted fake (`run_scripted`, which
the `run_fake` fixture wraps)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink
from dagmca.debate.session import SessionResult
from dagmca.debate.state import SessionState
from dagmca.llm.fake import Responder, ScriptedCall, ScriptedLLM, checked_excerpt
from dagmca.prompts.schemas import TensionFlag, joint_lenses, joint_turns
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.judges import PairRule, StubRule, judge_reply, never_answered, same_text
from tests.support.opened import open_state

PASSAGE = (
    "Cities should price road space. Congestion is a cost each driver imposes on others. "
    "Critics say a flat charge is unfair to low-wage workers and that traffic moves to poorer "
    "neighbourhoods. Supporters cite London and Stockholm."
)

RunSession = Callable[..., tuple[SessionResult, SessionState, ScriptedLLM]]


def excerpt_of(call: ScriptedCall) -> str:
    """What an observer's flag quotes from the turn it checks: the start of the turn to
    check (on a group of sibling turns asked lens by lens, of the turn `lens_by_lens`
    names); a flag whose excerpt is not in its turn is discarded."""
    named = re.search(r"\(turn (\d+)\)\Z", call.prompt)
    return checked_excerpt(call.prompt, int(named.group(1)) if named else 1)


def lens_by_lens(responder: Responder) -> Responder:
    """A responder written for one observer call per lens, answering the joint call
    (every lens at once) too: asked once per lens, in the lenses' order, as that
    lens's own call would be; on a group of sibling turns, once per lens per turn, the
    turn's number added to the prompt (as its own call would have differed)."""

    def respond(call: ScriptedCall) -> Any:
        if call.schema is None or "flags" not in call.schema.model_fields:
            return responder(call)
        lenses, turns = joint_lenses(call.schema), joint_turns(call.schema)
        flags = []
        for turn in range(1, turns + 1) if turns else [0]:
            messages = call.messages
            if turn:
                last = {**messages[-1], "content": f"{messages[-1]['content']}\n(turn {turn})"}
                messages = [*messages[:-1], last]
            for lens in lenses:
                meta = call.meta.model_copy(update={"agent": f"observer:{lens}"})
                reply = responder(ScriptedCall(messages, TensionFlag, meta, call.max_tokens))
                if isinstance(reply, BaseModel):
                    reply = reply.model_dump(mode="json")
                if isinstance(reply, dict):
                    own = {k: v for k, v in reply.items() if k != "turn"}
                    flags.append({"lens": lens, **({"turn": turn} if turn else {}), **own})
        return {"flags": flags}

    return respond


def run_scripted(
    store: SQLiteStore,
    out_dir: Path,
    responder: Responder | None = None,
    *,
    session: str = "s1",
    delay: float | Callable[[ScriptedCall], float] = 0.0,
    events: EventSink | None = None,
    passage: str = PASSAGE,
    caps: bool = False,
    **settings: Any,
) -> tuple[SessionResult, SessionState, ScriptedLLM]:
    """A whole session on the scripted fake and the hashing embedder, wired as the CLI
    wires it (runner.open_state, runner.run_and_report)."""
    settings.setdefault("llm", "fake")
    # each run asks, and its agents start from zero: runs sharing a store stay independent
    settings.setdefault("cache", False)
    settings.setdefault("agent_memory", "session")
    cfg = SessionConfig(**settings)
    if responder is not None and not getattr(responder, "answers_joint", False):
        responder = lens_by_lens(responder)
    fake = ScriptedLLM(responder, delay=delay, caps=caps)

    async def go() -> tuple[SessionResult, SessionState]:
        async with open_state(
            cfg,
            store,
            client=fake,
            session_id=session,
            passage=passage,
            embedder=HashingEmbedder(),
            events=events,
        ) as state:
            result = await run_and_report(state, title="test", model="scripted", out_dir=out_dir / session)
        return result, state

    result, state = asyncio.run(go())
    return result, state, fake


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
