"""A merge of duplicate questions (stubs about street trees) run on the scripted fake."""

from __future__ import annotations

import asyncio
from typing import Any

from dagmca.config import SessionConfig
from dagmca.debate.dag import duplicates
from dagmca.debate.events import Event
from dagmca.debate.state import SessionState
from dagmca.graph import (
    DebateNode,
    DebateOrigin,
    EdgeType,
    Phase,
    Role,
    TensionCategory,
    TensionNode,
    TurnNode,
)
from dagmca.llm.fake import ScriptedLLM
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from tests.support.judges import judge_reply
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE

TREES = "Who pays for the upkeep of street trees once they are planted?"

# (debate, question): main first, then two sibling branches
STUBS = [
    ("main", TREES),
    ("main/b1", "Who pays for the upkeep of the street trees once they have been planted?"),
    ("main/b1", "Who pays for the upkeep of park benches once they are installed?"),
    ("main/b2", "Who pays for the upkeep of the street trees after they are planted?"),
    ("main/b2", "Do street trees lower summer temperatures in dense districts?"),
]


def about_tree_upkeep(a: str, b: str) -> bool:
    """The scripted judge: one question when both ask who pays for street trees."""
    return all("street trees" in q and q.startswith("Who pays") for q in (a, b))


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def run_merge(
    store: SQLiteStore, stubs: list[tuple[str, str]] = STUBS, **settings: Any
) -> tuple[SessionState, list[TensionNode], ScriptedLLM, Recorder, list[str]]:
    cfg = SessionConfig(llm="fake", **settings)
    fake = ScriptedLLM(lambda call: judge_reply(call, duplicate=about_tree_upkeep))
    recorder = Recorder()

    async def go() -> tuple[SessionState, list[TensionNode], list[str]]:
        async with open_state(
            cfg, store, client=fake, session_id="s", passage=PASSAGE, embedder=HashingEmbedder(),
            events=recorder,
        ) as state:  # fmt: skip
            debates = {
                name: DebateNode(
                    id=f"s/{name}",
                    session="s",
                    origin=DebateOrigin.MAIN if name == "main" else DebateOrigin.BRANCH,
                    question="Q",
                    depth=name.count("/"),
                )
                for name in ("main", "main/b1", "main/b2")
            }
            state.write(list(debates.values()))
            tensions = [
                TensionNode(
                    id=f"s/{debate}/t{i}",
                    session="s",
                    debate=f"s/{debate}",
                    question=question,
                    urgency=0.5,
                    rationale="r",
                    excerpt="e",
                    observer="skeptical",
                    category=TensionCategory.GAP,
                    flags=[f"skeptical@s/{debate}/r1/t{i}"],
                )
                for i, (debate, question) in enumerate(stubs)
            ]
            turns = [
                TurnNode(id=f"s/{debate}/r1/t{i}", session="s", debate=f"s/{debate}", agent="L1N1",
                         role=Role.SPECIALIST, perspective="critical", phase=Phase.RESPOND, round=1, text="x")
                for i, (debate, _) in enumerate(stubs)
            ]  # fmt: skip
            flagged = [
                state.handles.edge(t.id, turn.id, EdgeType.FLAGGED_AT, key="skeptical", observer="skeptical")
                for t, turn in zip(tensions, turns, strict=True)
            ]
            state.write([*turns, *tensions], flagged)
            merged = await duplicates.merge(state, [debates["main/b1"], debates["main/b2"]])
            return state, tensions, [t.id for t in merged]

    state, tensions, merged = asyncio.run(go())
    return state, tensions, fake, recorder, merged
