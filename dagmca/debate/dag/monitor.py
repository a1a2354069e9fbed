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
from dagmca.debate.events import DuplicateChecked, TensionDropped, TensionFlagged
from dagmca.debate.state import FrameFactory, SessionState
from dagmca.llm.base import CallMeta
from dagmca.llm.degenerate import degeneration
from dagmca.models import CallPhase, DebateNode, EdgeRecord, EdgeType, TensionNode, TensionStatus, TurnNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import TensionFlag, joint_flag_schema, round_flag_schema
from dagmca.similarity.counts import EmbedPhase

RECENT_TURNS = 4
Flags = list[tuple[str, TensionFlag]]  # (lens, flag)


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
        if self.state.config.observer_calls == "siblings":  # checked in on_phase
            return
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        self.transcript.append(turn)
        lenses = self.state.config.observers
        if self.state.config.observer_calls == "joint":
            messages = tpl.monitor_joint(lenses, self.frame(), recent, _label(turn), turn.text)
            self._start(lambda: self._ask_joint(messages), [turn])
            return
        for lens in lenses:
            messages = tpl.monitor(lens, self.frame(), recent, _label(turn), turn.text)
            self._start(self._asker(lens, messages, TensionFlag), [turn])

    def on_phase(self, groups: list[list[TurnNode]]) -> None:
        """--observer-calls siblings: one check per group of a phase's sibling turns, each
        with the transcript before the phase."""
        if self.mode != "turn" or self.state.config.observer_calls != "siblings":
            return
        recent = [(f"{t.agent} {t.phase.value}", t.text) for t in self.transcript[-RECENT_TURNS:]]
        lenses = self.state.config.observers
        for group in groups:
            turns = [t for t in group if not t.degenerate]  # a loop raises no tension worth a branch
            if not turns:
                continue
            self.transcript += turns
            messages = tpl.monitor_siblings(
                lenses, self.frame(), recent, [(_label(t), t.text) for t in turns]
            )
            self._start(partial(self._ask_joint, messages, len(turns)), turns)

    def on_round_end(self) -> None:
        turns, self._round_turns = self._round_turns, []
        if self.mode != "round" or not turns:
            return
        schema = round_flag_schema(len(turns))
        for lens in self.state.config.observers:
            messages = tpl.monitor_round(lens, self.frame(), [(_label(t), t.text) for t in turns])
            self._start(self._asker(lens, messages, schema), turns)

    def _start(self, ask: Callable[[], Awaitable[Flags]], turns: list[TurnNode]) -> None:
        before, mine = self._recorded, asyncio.Event()
        self._recorded = mine
        self._tasks.append(asyncio.create_task(self._check(ask, turns, before, mine)))

    def _asker(
        self, lens: str, messages: Prompt, schema: type[TensionFlag]
    ) -> Callable[[], Awaitable[Flags]]:
        async def ask() -> Flags:
            flag = await self._ask(f"observer:{lens}", messages, schema, self.state.config.flag_tokens())
            return [] if flag is None else [(lens, flag)]

        return ask

    async def drain(self) -> None:
        self.on_round_end()  # turns after the last round end (strange loop) are checked too
        if self._tasks:
            await asyncio.gather(*self._tasks)
            self._tasks.clear()

    async def _check(
        self,
        ask: Callable[[], Awaitable[Flags]],
        turns: list[TurnNode],
        before: asyncio.Event | None,
        mine: asyncio.Event,
    ) -> None:
        try:
            flags = await ask()
            # encoded while this check waits its turn: recording then compares at once
            self.state.embedder.prefetch([flag.question.strip() for _, flag in flags], soon=True)
            if before is not None:
                await before.wait()
            for lens, flag in flags:
                await self._consider(lens, flag, turns)
        finally:
            mine.set()

    async def _ask_joint(self, messages: Prompt, turns: int = 0) -> Flags:
        """Every lens's flag of one turn (or, with `turns`, of each of a group of turns)
        from one call, in turn order, then the configured lenses' order (the graph must
        not depend on the order the model listed them in); a lens's second flag on a turn
        is dropped, counted, as the per-lens call could not have made it."""
        st = self.state
        lenses = st.config.observers
        schema = joint_flag_schema(lenses, turns)
        reply = await self._ask(
            "observers", messages, schema, st.config.flag_tokens() * len(lenses) * max(1, turns)
        )
        if reply is None:
            return []
        found: dict[tuple[int, str], TensionFlag] = {}
        for flag in getattr(reply, "flags", []):
            key = (getattr(flag, "turn", 1), flag.lens)
            if key in found:
                st.dropped_tensions += 1
                reason = f"a second flag from the {flag.lens} observer on one turn"
                st.emit(
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
        st.flag_calls += 1
        done = await st.ask(messages, schema=schema, max_tokens=max_tokens, meta=meta)
        if done is None:  # a lost check
            st.flag_failures += 1
            return None
        return done.parsed

    async def _consider(self, lens: str, flag: TensionFlag, turns: list[TurnNode]) -> None:
        st = self.state
        question = flag.question.strip()
        if flag.urgency < st.config.urgency_threshold or len(question) < 8:
            return
        # a question that loops, or restates the observers' own instructions ("what is the
        # tension in the turns above?") or the debate's own question, would send a branch
        # off to debate nothing. (Not the rest of the prompt: a branch's background names
        # its siblings' questions, and near-duplicates of those are the selector's call.)
        # One that repeats only the wording of the question a branch explores may still
        # ask something else in those words: the judge decides, as for any two questions.
        instructions = tpl.observer_scaffolding(self.debate.question)
        reason = degeneration(question, instructions, share_limit=0.5)
        turn = turns[getattr(flag, "turn", 1) - 1]
        kept = ""
        if reason is not None:
            explored = self._explored(question)
            if explored is None:
                self._drop(lens, question, reason)
                return
            if await self._twin(question) is None:
                decision = await restating(st, explored, self._tension(lens, turn, flag, question))
                if decision.verdict == "duplicate":
                    return
                if decision.verdict == judge.UNDECIDED:
                    self._drop(lens, question, reason)
                    return
                # kept by the judge's verdict, recorded on it beside the guard's finding
                kept = f"{reason}, but the judge found it asks other than {explored.id}: {decision.reason}"
        await self._record(lens, turn, flag, question, kept)

    def _drop(self, lens: str, question: str, reason: str) -> None:
        self.state.dropped_tensions += 1
        self.state.emit(
            TensionDropped(debate=self.debate.id, observer=lens, question=question, reason=reason)
        )

    def _explored(self, question: str) -> TensionNode | None:
        """The tension this branch explores, when `question` echoes its wording and not the
        observers' instructions: whether the two ask the same is then the judge's call
        (`restating`), not the guard's. None on the main debate, for a question that also
        echoes the instructions, and with --judge embedding (the guard's rule stands)."""
        st = self.state
        parts = self.debate.id.split("/")
        ancestors = ["/".join(parts[:k]) for k in range(1, len(parts))]
        explored = [
            t
            for d in ancestors
            for t in st.tensions_of.get(d, {}).values()
            if t.question == self.debate.question
        ]
        if not explored or st.config.judge != "llm":
            return None
        if degeneration(question, tpl.observer_scaffolding(""), share_limit=0.5) is not None:
            return None
        return explored[-1]

    async def _twin(self, question: str) -> TensionNode | None:
        """An earlier tension of the debate's line that `question` restates (a flag
        merged as a duplicate stands for the tension it duplicates), or None."""
        st = self.state
        # A near-duplicate is looked for across the debate's line: a branch re-raising the
        # question it explores, or one its ancestors hold, is one tension flagged twice,
        # not two. (Not its siblings': they run at the same time, so which flagged first
        # would depend on latency, and the graph must not.) The debate's own flags come
        # here one at a time, in a fixed order (`_check`); its ancestors are finished.
        # So no lock: other debates record theirs meanwhile, and their encodes batch.
        parts = self.debate.id.split("/")
        line = ("/".join(parts[:k]) for k in range(1, len(parts) + 1))
        earlier = [t for d in line for t in st.tensions_of.get(d, {}).values()]
        if not earlier:
            return None
        sims = await st.embedder.asimilarities(
            question, [t.question for t in earlier], phase=EmbedPhase.FLAGS
        )
        best = int(sims.argmax())
        if sims[best] < st.config.duplicate_threshold:
            return None
        twin = earlier[best]
        if twin.status is TensionStatus.DUPLICATE and twin.duplicate_of in st.tensions:
            return st.tensions[twin.duplicate_of]
        return twin

    def _tension(self, lens: str, turn: TurnNode, flag: TensionFlag, question: str) -> TensionNode:
        return TensionNode(
            id=f"{turn.id}/flag/{lens}",
            session=self.state.session_id,
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
        self, lens: str, turn: TurnNode, flag: TensionFlag, question: str, kept: str = ""
    ) -> None:
        st = self.state
        twin = await self._twin(question)
        if twin is not None:
            flag_id = f"{lens}@{turn.id}"
            if flag_id not in twin.flags:  # one observer's second flag of a turn adds nothing
                # sorted: the order flags arrive in depends on latency, the graph must not
                twin.flags = sorted([*twin.flags, flag_id])
                st.write([twin], [flagged_at(st, twin.id, turn.id, lens)])
            return
        tension = self._tension(lens, turn, flag, question)
        tension.kept_reason = kept
        st.write([tension], [flagged_at(st, tension.id, turn.id, lens)])
        self._keep_ledger()
        st.emit(
            TensionFlagged(
                debate=self.debate.id, urgency=tension.urgency, question=tension.question, observer=lens
            )
        )

    def _keep_ledger(self) -> None:
        """At most --max-open-stubs open stubs per debate: past it, the least urgent (of
        equal urgency, the latest) is dropped: kept in the graph with its reason, counted,
        never revisited. Flags are recorded in a fixed order, so the same ones drop
        whatever the latency."""
        st, cap = self.state, self.state.config.max_open_stubs
        open_stubs = [
            t for t in st.tensions_of.get(self.debate.id, {}).values() if t.status is TensionStatus.STUB
        ]
        if len(open_stubs) <= cap:
            return
        drop = min(reversed(open_stubs), key=lambda t: t.urgency)  # the first minimum: the latest
        drop.status = TensionStatus.DROPPED
        drop.dropped_reason = (
            f"urgency {drop.urgency} was the lowest of {len(open_stubs)} open stubs of its debate "
            f"(--max-open-stubs {cap})"
        )
        # counted from the graph (the summary's `tensions` row), not with the degeneration
        # guard's drops: a dropped stub is not degenerate
        st.write([drop])
        st.emit(
            TensionDropped(
                debate=self.debate.id,
                observer=drop.observer,
                question=drop.question,
                reason=drop.dropped_reason,
            )
        )


def flagged_at(st: SessionState, tension: str, turn: str, lens: str) -> EdgeRecord:
    """Keyed by the observer: a second observer's flag of the same turn is its own edge."""
    return st.edge(tension, turn, EdgeType.FLAGGED_AT, key=lens, observer=lens)


async def restating(state: SessionState, explored: TensionNode, flag: TensionNode) -> judge.Decision:
    """A branch's new flag (not written yet) whose question the degeneration guard found
    restating the question the branch explores: whether the two ask the same is a
    judged decision, as for any two questions (the guard only counts shared wording).
    `duplicate`: the flag is written as a duplicate of the explored tension, which is
    flagged at its turn too. Otherwise the caller keeps it (`distinct`) or, with no
    verdict, drops it as the guard would."""
    sims = await state.embedder.asimilarities(flag.question, [explored.question], phase=EmbedPhase.FLAGS)
    similarity = round(float(sims[0]), 4)
    decision = await judge.duplicate(state, explored, flag, similarity)
    merged = decision.verdict == "duplicate"
    if merged:
        flag.status = TensionStatus.DUPLICATE
        flag.duplicate_of = explored.id
        flag.dropped_reason = (
            f"asks what {explored.id}, the question its debate explores, asks: {decision.reason}"
        )
        lens, turn = flag.flags[0].split("@", 1)
        explored.flags = sorted({*explored.flags, *flag.flags})
        edges = [
            flagged_at(state, flag.id, turn, lens),
            state.edge(flag.id, explored.id, EdgeType.DUPLICATES, **decision.props()),
            flagged_at(state, explored.id, turn, lens),
        ]
        state.write([flag, explored], edges)
    state.emit(
        DuplicateChecked(
            stub=flag.id,
            question=flag.question,
            twin=explored.id,
            twin_question=explored.question,
            merged=merged,
            similarity=round(similarity, 2),
            method=decision.method.value,
            reason=decision.reason,
            verdict=decision.verdict,
        )
    )
    return decision
