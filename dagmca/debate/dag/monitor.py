"""Observers: they check the debate's turns for tensions.

Mode `turn`: the observers check every turn with the recent transcript. With
--observer-calls siblings (the default), after each phase, all lenses check a group of
sibling turns (one parent's children) in one call: a list of flags, at most one per
lens per turn, each naming its turn. With joint, each turn gets its own call for all
lenses; with per-lens, one call per lens per turn. Mode `round`: after each round,
every observer reads the round's turns in one call and names the turn that triggered
its flag. Mode `off`: no observer calls (`compare` measures protocols alone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from dagmca.debate.dag import judge
from dagmca.debate.dag.flags import cap_open_stubs, explored_tension, flagged_at, restating, twin_in_line
from dagmca.debate.events import TensionDropped, TensionFlagged
from dagmca.debate.state import SessionState
from dagmca.debate.state.prompt_space import FrameFactory
from dagmca.graph import CallPhase, DebateNode, TensionNode, TurnNode
from dagmca.llm.base import CallMeta
from dagmca.llm.degenerate import degeneration
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import TensionFlag, joint_flag_schema, round_flag_schema
from dagmca.text import nearest_sentence, quotes

RECENT_TURNS = 4
# the debate's tensions an observer is shown, the latest: enough to steer it off repeats
FLAGGED_SHOWN = 12
Flags = list[tuple[str, TensionFlag]]  # (lens, flag)
Asker = Callable[[list[str]], Awaitable[Flags]]  # given the tensions flagged so far


def _label(turn: TurnNode) -> str:
    return f"{turn.agent}, {turn.perspective}, {turn.phase.value}"


class Monitor:
    """Watches one debate. Checks run as background tasks so the debate never waits
    for its observers; `drain` waits for them when the debate is over."""

    def __init__(self, state: SessionState, debate: DebateNode, frame: FrameFactory) -> None:
        self.state = state
        self.debate = debate
        self.frame = frame
        self.mode = state.handles.config.monitor_mode()
        self.transcript: list[TurnNode] = []
        self._round_turns: list[TurnNode] = []
        self._tasks: list[asyncio.Task[None]] = []
        # Each check records its flag only after the check started before it has:
        # near-duplicate merging then sees flags in a fixed order, whatever the latency.
        self._recorded: asyncio.Event | None = None
        # The checks started together (a turn's, a phase's, a round's) are a batch; each
        # is shown the flags the batches before it raised, so it waits for their calls
        # (not for their recording, which may wait on a judge): what an observer is shown
        # never depends on which check answered first.
        self._raised: dict[int, list[str]] = {}  # check number -> the questions it raised
        self._started = 0  # checks started
        self._batch: tuple[int, list[asyncio.Event]] = (0, [])  # its first check, the previous batch's
        self._asked: list[asyncio.Event] = []  # the current batch's checks, answered

    def _open_batch(self) -> None:
        # a batch that started no check (its turns all degenerate) leaves the one before
        # it as what the next waits for
        self._batch = (self._started, self._asked or self._batch[1])
        self._asked = []

    async def on_turn(self, turn: TurnNode) -> None:
        if self.mode == "off" or turn.degenerate:  # a loop raises no tension worth a branch
            return
        if self.mode == "round":
            self._round_turns.append(turn)
            return
        if self.state.handles.config.observer_calls == "siblings":  # checked in on_phase
            return
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        self.transcript.append(turn)
        lenses = self.state.handles.config.observers
        frame = self.frame()  # now: a branch's background changes while it runs
        self._open_batch()
        if self.state.handles.config.observer_calls == "joint":

            async def joint(flagged: list[str]) -> Flags:
                prompt = tpl.monitor_joint(lenses, frame, recent, _label(turn), turn.text, flagged)
                return await self._ask_joint(prompt)

            self._start(joint, [turn])
            return
        for lens in lenses:
            prompt = partial(tpl.monitor, lens, frame, recent, _label(turn), turn.text)
            self._start(self._asker(lens, prompt, TensionFlag), [turn])

    def on_phase(self, groups: list[list[TurnNode]]) -> None:
        """--observer-calls siblings: one check per group of a phase's sibling turns, each
        with the transcript before the phase."""
        if self.mode != "turn" or self.state.handles.config.observer_calls != "siblings":
            return
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        lenses = self.state.handles.config.observers
        frame = self.frame()
        self._open_batch()
        for group in groups:
            turns = [t for t in group if not t.degenerate]  # a loop raises no tension worth a branch
            if not turns:
                continue
            self.transcript += turns
            labelled = [(_label(t), t.text) for t in turns]

            async def siblings(flagged: list[str], labelled: list[tuple[str, str]] = labelled) -> Flags:
                prompt = tpl.monitor_siblings(lenses, frame, recent, labelled, flagged)
                return await self._ask_joint(prompt, len(labelled))

            self._start(siblings, turns)

    def on_round_end(self) -> None:
        turns, self._round_turns = self._round_turns, []
        if self.mode != "round" or not turns:
            return
        schema = round_flag_schema(len(turns))
        frame = self.frame()
        self._open_batch()
        for lens in self.state.handles.config.observers:
            prompt = partial(tpl.monitor_round, lens, frame, [(_label(t), t.text) for t in turns])
            self._start(self._asker(lens, prompt, schema), turns)

    def _start(self, ask: Asker, turns: list[TurnNode]) -> None:
        before, mine = self._recorded, asyncio.Event()
        self._recorded = mine
        asked = asyncio.Event()
        self._asked.append(asked)
        check = self._check(ask, turns, before, mine, (self._started, asked, *self._batch))
        self._started += 1
        self._tasks.append(asyncio.create_task(check))

    def _asker(self, lens: str, prompt: Callable[[list[str]], Prompt], schema: type[TensionFlag]) -> Asker:
        async def ask(flagged: list[str]) -> Flags:
            cap = self.state.handles.config.flag_tokens()
            flag = await self._ask(f"observer:{lens}", prompt(flagged), schema, cap)
            return [] if flag is None else [(lens, flag)]

        return ask

    def _flagged(self, before: int) -> list[str]:
        """The questions the checks before check number `before` raised, each once, in
        the order the checks started (the latest FLAGGED_SHOWN)."""
        shown = [q for n in sorted(self._raised) if n < before for q in self._raised[n]]
        return list(dict.fromkeys(shown))[-FLAGGED_SHOWN:]

    def _raises(self, flag: TensionFlag, turns: list[TurnNode]) -> bool:
        """Whether a flag may become a tension: urgent enough, a question, and quoting
        its turn (what `_consider` checks before anything else)."""
        turn = turns[getattr(flag, "turn", 1) - 1]
        urgent = flag.urgency >= self.state.handles.config.urgency_threshold
        return urgent and len(flag.question.strip()) >= 8 and quotes(flag.excerpt, turn.text)

    async def drain(self) -> None:
        self.on_round_end()  # turns after the last round end (strange loop) are checked too
        if self._tasks:
            await asyncio.gather(*self._tasks)
            self._tasks.clear()

    async def _check(
        self,
        ask: Asker,
        turns: list[TurnNode],
        before: asyncio.Event | None,
        mine: asyncio.Event,
        batch: tuple[int, asyncio.Event, int, list[asyncio.Event]],
    ) -> None:
        number, asked, first, earlier = batch
        flags: Flags = []
        try:
            for event in earlier:
                await event.wait()
            flags = await ask(self._flagged(first))
            self._raised[number] = [f.question.strip() for _, f in flags if self._raises(f, turns)]
            asked.set()
            # encoded while this check waits its turn: recording then compares at once
            self.state.handles.embedder.prefetch([flag.question.strip() for _, flag in flags], soon=True)
            if before is not None:
                await before.wait()
            for lens, flag in flags:
                await self._consider(lens, flag, turns)
        finally:  # a check that failed or was stopped holds up no other
            asked.set()
            mine.set()

    async def _ask_joint(self, messages: Prompt, turns: int = 0) -> Flags:
        """Every lens's flag of one turn (or, with `turns`, of each of a group of turns)
        from one call, in turn order, then the configured lenses' order (the graph must
        not depend on the order the model listed them in); a lens's second flag on a turn
        is dropped, counted, as the per-lens call could not have made it."""
        st = self.state
        lenses = st.handles.config.observers
        schema = joint_flag_schema(lenses, turns)
        reply = await self._ask(
            "observers", messages, schema, st.handles.config.flag_tokens() * len(lenses) * max(1, turns)
        )
        if reply is None:
            return []
        found: dict[tuple[int, str], TensionFlag] = {}
        for flag in getattr(reply, "flags", []):
            key = (getattr(flag, "turn", 1), flag.lens)
            if key in found:
                st.counts.dropped_tensions += 1
                reason = f"a second flag from the {flag.lens} observer on one turn"
                st.handles.emit(
                    TensionDropped(
                        debate=self.debate.id, observer=flag.lens, question=flag.question, reason=reason
                    )
                )
                continue
            found[key] = flag
        order = {lens: i for i, lens in enumerate(lenses)}
        return [(key[1], found[key]) for key in sorted(found, key=lambda k: (k[0], order[k[1]]))]

    async def _ask(self, agent: str, messages: Prompt, schema: type[Any], max_tokens: int) -> Any:
        meta = CallMeta(agent=agent, debate=self.debate.id, phase=CallPhase.MONITOR)
        st = self.state
        st.counts.flag_calls += 1
        done = await st.ask(messages, schema=schema, max_tokens=max_tokens, meta=meta)
        if done is None:  # a lost check
            st.counts.flag_failures += 1
            return None
        return done.parsed

    async def _consider(self, lens: str, flag: TensionFlag, turns: list[TurnNode]) -> None:
        st = self.state
        question = flag.question.strip()
        if flag.urgency < st.handles.config.urgency_threshold or len(question) < 8:
            return
        turn = turns[getattr(flag, "turn", 1) - 1]
        located = False
        if not quotes(flag.excerpt, turn.text):  # what raised it is not in the turn it names
            # the bundled model's concession (--unquoted-excerpts locate): its quotes are
            # rarely word for word, so the turn's sentence nearest the flag stands in,
            # marked; every other model's unquoted flag is dropped
            nearest = None
            if st.handles.config.unquoted_excerpts == "locate":
                nearest = nearest_sentence(f"{flag.excerpt} {question}", turn.text)
            if nearest is None:
                self._drop(lens, question, "its excerpt is not in the turn it flags")
                return
            flag, located = flag.model_copy(update={"excerpt": nearest}), True
        # a question that loops, or restates the observers' own instructions ("what is the
        # tension in the turns above?") or the debate's own question, would send a branch
        # off to debate nothing. (Not the rest of the prompt: a branch's background names
        # its siblings' questions, and near-duplicates of those are the selector's call.)
        # One that repeats only the wording of the question a branch explores may still
        # ask something else in those words: the judge decides, as for any two questions.
        instructions = tpl.observer_scaffolding(self.debate.question)
        reason = degeneration(question, instructions, share_limit=0.5)
        kept = ""
        if reason is not None:
            explored = explored_tension(st, self.debate, question)
            if explored is None:
                self._drop(lens, question, reason)
                return
            if await twin_in_line(st, self.debate, question) is None:
                decision = await restating(st, explored, self._tension(lens, turn, flag, question))
                if decision.verdict == "duplicate":
                    return
                if decision.verdict == judge.UNDECIDED:
                    self._drop(lens, question, reason)
                    return
                # kept by the judge's verdict, recorded on it beside the guard's finding
                kept = f"{reason}, but the judge found it asks other than {explored.id}: {decision.reason}"
        await self._record(lens, turn, flag, question, kept, located)

    def _drop(self, lens: str, question: str, reason: str) -> None:
        self.state.counts.dropped_tensions += 1
        self.state.handles.emit(
            TensionDropped(debate=self.debate.id, observer=lens, question=question, reason=reason)
        )

    def _tension(self, lens: str, turn: TurnNode, flag: TensionFlag, question: str) -> TensionNode:
        return TensionNode(
            id=f"{turn.id}/flag/{lens}",
            session=self.state.handles.session_id,
            debate=self.debate.id,
            question=question,
            urgency=round(flag.urgency, 3),
            rationale=flag.rationale.strip(),
            excerpt=flag.excerpt.strip(),
            observer=lens,
            category=flag.category,
            flags=[f"{lens}@{turn.id}"],
        )

    async def _record(
        self,
        lens: str,
        turn: TurnNode,
        flag: TensionFlag,
        question: str,
        kept: str = "",
        located: bool = False,
    ) -> None:
        st = self.state
        twin = await twin_in_line(st, self.debate, question)
        if twin is not None:
            flag_id = f"{lens}@{turn.id}"
            if flag_id not in twin.flags:  # one observer's second flag of a turn adds nothing
                # sorted: the order flags arrive in depends on latency, the graph must not
                twin.flags = sorted([*twin.flags, flag_id])
                st.write([twin], [flagged_at(st.handles, twin.id, turn.id, lens)])
            return
        tension = self._tension(lens, turn, flag, question)
        tension.kept_reason = kept
        tension.excerpt_located = located
        st.write([tension], [flagged_at(st.handles, tension.id, turn.id, lens)])
        cap_open_stubs(st, self.debate)
        st.handles.emit(
            TensionFlagged(
                debate=self.debate.id, urgency=tension.urgency, question=tension.question, observer=lens
            )
        )
