"""Observers: after each turn, every observer checks it for a tension (DESIGN §1.2)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta, LLMError
from dagmca.models import DebateNode, EdgeType, TensionNode, TurnNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import TensionFlag

RECENT_TURNS = 4


class Monitor:
    """Watches one debate. Checks run as background tasks so the debate never waits
    for its observers; `drain` waits for them when the debate is over."""

    def __init__(self, state: SessionState, debate: DebateNode, frame: Callable[[], tpl.Frame]) -> None:
        self.state = state
        self.debate = debate
        self.frame = frame
        self.transcript: list[TurnNode] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def on_turn(self, turn: TurnNode) -> None:
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        self.transcript.append(turn)
        for lens in self.state.config.observers:
            self._tasks.append(asyncio.create_task(self._check(lens, turn, recent)))

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks)
            self._tasks.clear()

    async def _check(self, lens: str, turn: TurnNode, recent: list[tuple[str, str]]) -> None:
        st, cfg = self.state, self.state.config
        messages = tpl.monitor(lens, self.frame(), recent, f"{turn.agent}, {turn.perspective}, {turn.phase.value}", turn.text)
        try:
            done = await st.llm.complete(
                messages,
                schema=TensionFlag,
                max_tokens=cfg.max_flag_tokens,
                temperature=cfg.temperature,
                seed=cfg.seed,
                meta=CallMeta(agent=f"observer:{lens}", debate=self.debate.id, phase="monitor"),
            )
        except LLMError as exc:  # a lost flag, not a lost run
            st.events.emit("call_failed", debate=self.debate.id, agent=lens, error=str(exc))
            return
        flag: TensionFlag = done.parsed
        question = flag.question.strip()
        if not flag.has_tension or flag.urgency < cfg.urgency_threshold or len(question) < 8:
            return
        await self._record(lens, turn, flag, question)

    async def _record(self, lens: str, turn: TurnNode, flag: TensionFlag, question: str) -> None:
        st = self.state
        # Serialised: near-duplicate detection must see every earlier flag.
        async with st.tension_lock:
            same_debate = [t for t in st.tensions.values() if t.debate == self.debate.id]
            if same_debate:
                sims = [st.embedder.similarity(question, t.question) for t in same_debate]
                best = max(range(len(sims)), key=sims.__getitem__)
                if sims[best] >= st.config.duplicate_threshold:
                    twin = same_debate[best]
                    st.write([], [st.edge(twin.id, turn.id, EdgeType.FLAGGED_AT, observer=lens)])
                    return
            tension = TensionNode(
                id=f"{turn.id}/flag/{lens}",
                session=st.session_id,
                debate=self.debate.id,
                question=question,
                urgency=round(flag.urgency, 3),
                rationale=flag.rationale.strip(),
                excerpt=flag.excerpt.strip(),
                observer=lens,
                category=flag.category,
            )
            st.write([tension], [st.edge(tension.id, turn.id, EdgeType.FLAGGED_AT, observer=lens)])
        st.events.emit("tension", debate=self.debate.id, urgency=tension.urgency)
