"""Observers: they check the debate's turns for tensions (DESIGN §1.2).

Mode `turn`: after each turn, every observer checks it with the recent transcript.
Mode `round`: after each round, every observer reads the round's turns in one call
and names the turn that triggered its flag. Mode `off`: no observer calls (`compare`
measures protocols alone).
"""

from __future__ import annotations

import asyncio

from dagmca.debate.events import TensionDropped, TensionFlagged
from dagmca.debate.state import FrameFactory, SessionState
from dagmca.llm.base import CallMeta
from dagmca.llm.degenerate import degeneration
from dagmca.models import CallPhase, DebateNode, EdgeRecord, EdgeType, TensionNode, TurnNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import TensionFlag, round_flag_schema

RECENT_TURNS = 4


def _label(turn: TurnNode) -> str:
    return f"{turn.agent}, {turn.perspective}, {turn.phase.value}"


class Monitor:
    """Watches one debate. Checks run as background tasks so the debate never waits
    for its observers; `drain` waits for them when the debate is over."""

    def __init__(self, state: SessionState, debate: DebateNode, frame: FrameFactory) -> None:
        self.state = state
        self.debate = debate
        self.frame = frame
        self.mode = state.config.monitor_mode()
        self.transcript: list[TurnNode] = []
        self._round_turns: list[TurnNode] = []
        self._tasks: list[asyncio.Task[None]] = []
        # Each check records its flag only after the check started before it has:
        # near-duplicate merging then sees flags in a fixed order, whatever the latency.
        self._recorded: asyncio.Event | None = None

    async def on_turn(self, turn: TurnNode) -> None:
        if self.mode == "off" or turn.degenerate:  # a loop raises no tension worth a branch
            return
        if self.mode == "round":
            self._round_turns.append(turn)
            return
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        self.transcript.append(turn)
        for lens in self.state.config.observers:
            messages = tpl.monitor(lens, self.frame(), recent, _label(turn), turn.text)
            self._start(lens, messages, TensionFlag, [turn])

    def on_round_end(self) -> None:
        turns, self._round_turns = self._round_turns, []
        if self.mode != "round" or not turns:
            return
        schema = round_flag_schema(len(turns))
        for lens in self.state.config.observers:
            messages = tpl.monitor_round(lens, self.frame(), [(_label(t), t.text) for t in turns])
            self._start(lens, messages, schema, turns)

    def _start(self, lens: str, messages: Prompt, schema: type[TensionFlag], turns: list[TurnNode]) -> None:
        before, mine = self._recorded, asyncio.Event()
        self._recorded = mine
        self._tasks.append(asyncio.create_task(self._check(lens, messages, schema, turns, before, mine)))

    async def drain(self) -> None:
        self.on_round_end()  # turns after the last round end (strange loop) are checked too
        if self._tasks:
            await asyncio.gather(*self._tasks)
            self._tasks.clear()

    async def _check(
        self,
        lens: str,
        messages: Prompt,
        schema: type[TensionFlag],
        turns: list[TurnNode],
        before: asyncio.Event | None,
        mine: asyncio.Event,
    ) -> None:
        try:
            flag = await self._ask(lens, messages, schema)
            if before is not None:
                await before.wait()
            if flag is not None:
                await self._consider(lens, flag, turns)
        finally:
            mine.set()

    async def _ask(self, lens: str, messages: Prompt, schema: type[TensionFlag]) -> TensionFlag | None:
        meta = CallMeta(agent=f"observer:{lens}", debate=self.debate.id, phase=CallPhase.MONITOR)
        st = self.state
        st.flag_calls += 1
        done = await st.ask(messages, schema=schema, max_tokens=st.config.flag_tokens(), meta=meta)
        if done is None:  # a lost flag
            st.flag_failures += 1
            return None
        flag: TensionFlag = done.parsed
        return flag

    async def _consider(self, lens: str, flag: TensionFlag, turns: list[TurnNode]) -> None:
        st = self.state
        question = flag.question.strip()
        if flag.urgency < st.config.urgency_threshold or len(question) < 8:
            return
        # a question that loops, or restates the observers' own instructions ("what is the
        # tension in the turns above?") or the debate's own question, would send a branch
        # off to debate nothing. (Not the rest of the prompt: a branch's background names
        # its siblings' questions, and near-duplicates of those are the selector's call.)
        instructions = tpl.observer_scaffolding(self.debate.question)
        reason = degeneration(question, instructions, share_limit=0.5)
        if reason is not None:
            st.dropped_tensions += 1
            st.emit(TensionDropped(debate=self.debate.id, observer=lens, question=question, reason=reason))
            return
        turn = turns[getattr(flag, "turn", 1) - 1]
        await self._record(lens, turn, flag, question)

    async def _record(self, lens: str, turn: TurnNode, flag: TensionFlag, question: str) -> None:
        st = self.state
        # Serialised: near-duplicate detection must see every earlier flag.
        async with st.tension_lock:
            same_debate = [t for t in st.tensions.values() if t.debate == self.debate.id]
            if same_debate:
                sims = [await st.embedder.asimilarity(question, t.question) for t in same_debate]
                best = max(range(len(sims)), key=sims.__getitem__)
                if sims[best] >= st.config.duplicate_threshold:
                    twin = same_debate[best]
                    flag_id = f"{lens}@{turn.id}"
                    if flag_id not in twin.flags:  # one observer's second flag of a turn adds nothing
                        # sorted: the order flags arrive in depends on latency, the graph must not
                        twin.flags = sorted([*twin.flags, flag_id])
                        st.write([twin], [_flagged(st, twin.id, turn.id, lens)])
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
                flags=[f"{lens}@{turn.id}"],
            )
            st.write([tension], [_flagged(st, tension.id, turn.id, lens)])
        st.emit(
            TensionFlagged(
                debate=self.debate.id, urgency=tension.urgency, question=tension.question, observer=lens
            )
        )


def _flagged(st: SessionState, tension: str, turn: str, lens: str) -> EdgeRecord:
    """Keyed by the observer: a second observer's flag of the same turn is its own edge."""
    return st.edge(tension, turn, EdgeType.FLAGGED_AT, key=lens, observer=lens)
