"""What every debate protocol shares: calls recorded as Turns in Rounds, phases of
concurrent calls handed on in agent order, and the strange loop at the root."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import ClassVar, Generic, TypeVar

from pydantic import BaseModel

from dagmca import tracing
from dagmca.debate.events import RoundStarted, TurnRecorded
from dagmca.debate.outcomes import DebateOutcome
from dagmca.debate.state import SessionState
from dagmca.debate.state.prompt_space import FrameFactory
from dagmca.graph import DebateNode, DebateOrigin, EdgeRecord, EdgeType, Phase, RoundNode, TurnNode
from dagmca.llm.base import CallMeta, Completion
from dagmca.metrics.session import CONTENT
from dagmca.prompts import agents as ap
from dagmca.prompts import lines
from dagmca.prompts.budget import Prompt
from dagmca.similarity import jaccard
from dagmca.team import Agent, AgentTree, sibling_groups

TurnHook = Callable[[TurnNode], Awaitable[None]]
RoundHook = Callable[[int, str], None]
BeforeRoundHook = Callable[[int], Awaitable[None]]
PhaseHook = Callable[[list[list[TurnNode]]], None]
# the tensions flagged in the debate so far, once its observers are done with its turns
FlagsHook = Callable[[], Awaitable[list[str]]]

# Phases that carry the debate's content; the others (reflections) are about it.
OBSERVED_PHASES = frozenset(Phase) - {Phase.REFLECT, Phase.VOTE, Phase.RESTART, Phase.TIMEOUT}


Outcome = TypeVar("Outcome", bound=DebateOutcome)


class Engine(Generic[Outcome]):
    """One debate over an agent tree. Subclasses implement `new_outcome` and `run`."""

    protocol: ClassVar[str] = ""

    def __init__(
        self,
        state: SessionState,
        debate: DebateNode,
        frame: FrameFactory,
        *,
        on_turn: TurnHook | None = None,
        on_round: RoundHook | None = None,
        before_round: BeforeRoundHook | None = None,
        on_phase: PhaseHook | None = None,
        kept: Mapping[str, list[str]] | None = None,
        flags: FlagsHook | None = None,
    ) -> None:
        cfg = state.handles.config
        self.state = state
        self.debate = debate
        self.frame = frame  # called per prompt: branch background changes while we run
        staff = tuple(debate.staff) if debate.staff else None
        self.tree: AgentTree = cfg.tree(staff)
        self._default = cfg.tree()  # who sits where without routing
        self.on_turn = on_turn
        self.on_round = on_round
        self.before_round = before_round
        self.on_phase = on_phase
        self.flags = flags
        # a question session's main debate: respond and lateral turns end with an answer
        self.answering = state.question is not None and debate.origin is DebateOrigin.MAIN
        # the agents' contexts as they were when the debate started (a debate's prompts
        # must not change with credits given to others while it runs)
        self._kept = dict(kept) if kept is not None else state.contexts.snapshot()
        self.latest: dict[str, TurnNode] = {}  # agent -> its latest contribution
        self._traced: tracing.Round | None = None  # the open round's span, when traced
        self.outcome: Outcome = self.new_outcome()
        self.setup()

    def kept(self, perspective: str) -> list[str]:
        """What the agent of `perspective` kept from earlier debates."""
        return list(self._kept.get(perspective, ()))

    def new_outcome(self) -> Outcome:
        raise NotImplementedError

    def setup(self) -> None:
        """A protocol's own state, set up after the shared one."""

    async def run(self) -> Outcome:
        raise NotImplementedError

    # -- one call, recorded as a Turn --------------------------------------------
    async def _call(
        self,
        agent: Agent,
        phase: Phase,
        messages: Prompt,
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int | None = None,
    ) -> Completion | None:
        st = self.state
        self.outcome.calls += 1
        meta = CallMeta(agent=agent.name, debate=self.debate.id, phase=phase.value)
        tokens = max_tokens or st.handles.config.turn_tokens()
        return await st.ask(messages, max_tokens=tokens, meta=meta, schema=schema)

    def _record(
        self,
        agent: Agent,
        phase: Phase,
        rnd: RoundNode,
        text: str,
        tokens: int,
        *,
        revises: TurnNode | None = None,
        observes: Sequence[TurnNode] = (),
        turn_id: str | None = None,
        degenerate: bool = False,
        **extra: float | str | None,
    ) -> TurnNode:
        st = self.state
        text = st.clean(text) or "(no answer)"
        # An Agent node is a seat with its perspective: a routed branch that seats another
        # perspective there gets its own node (L1N1.ethical), so BY never points at the wrong one.
        default = self._default.agents.get(agent.name)
        same = default is not None and default.perspective == agent.perspective
        key = agent.name if same else f"{agent.name}.{agent.perspective}"
        turn = TurnNode(
            id=turn_id or f"{rnd.id}/{agent.name}/{phase.value}",
            session=st.handles.session_id,
            debate=self.debate.id,
            agent=agent.name,
            role=agent.role,
            perspective=agent.perspective,
            phase=phase,
            round=rnd.number,
            text=text,
            revised=revises is not None and jaccard(text, revises.text) < 0.9,
            tokens=tokens,
            degenerate=degenerate,
            **extra,
        )
        edges: list[EdgeRecord] = [
            st.handles.edge(turn.id, rnd.id, EdgeType.IN_ROUND),
            st.handles.edge(turn.id, st.agent_id(key), EdgeType.BY),
        ]
        if revises is not None:
            edges.append(st.handles.edge(turn.id, revises.id, EdgeType.REVISES))
        edges += [st.handles.edge(turn.id, o.id, EdgeType.OBSERVES) for o in observes]
        agent_node = st.agent_node(key, agent.role, agent.perspective, agent.level)
        if agent_node is not None:
            edges += st.plays(agent_node)
        st.write([*([agent_node] if agent_node else []), turn], edges)
        # embedded ahead, while the debate waits on its model: the metrics read every
        # contribution, a resolution is credited and checked against the open stubs, and
        # a branch's turns are compared with its siblings' outputs
        branch = self.debate.origin is not DebateOrigin.MAIN
        if phase in CONTENT or phase is Phase.STRANGE_LOOP or (branch and phase in OBSERVED_PHASES):
            st.handles.embedder.prefetch([text])
        st.handles.emit(TurnRecorded(debate=self.debate.id, agent=agent.name, phase=phase.value))
        return turn

    async def _turn(
        self,
        agent: Agent,
        phase: Phase,
        rnd: RoundNode,
        messages: Prompt,
        *,
        revises: TurnNode | None = None,
        observes: Sequence[TurnNode] = (),
        turn_id: str | None = None,
        keep: bool = True,
    ) -> TurnNode | None:
        """A plain-text call; `keep` makes it the agent's latest contribution."""
        done = await self._call(agent, phase, messages)
        if done is None:
            return None
        turn = self._record(
            agent,
            phase,
            rnd,
            done.text,
            done.usage.total,
            revises=revises,
            observes=observes,
            turn_id=turn_id,
            degenerate=bool(done.degenerate),
            **self._lines(phase, done.text),
        )
        if keep:
            self.latest[agent.name] = turn
        return turn

    async def _phase(self, calls: Sequence[Awaitable[TurnNode | None]]) -> list[TurnNode]:
        """Run a phase's calls concurrently, then hand the turns on in agent order, never
        in completion order: what observers and other branches see must not depend on
        latency, or a replay from the cache (resume, re-run) would ask different questions."""
        turns = [t for t in await asyncio.gather(*calls) if t is not None]
        for turn in turns:
            self.outcome.turns.append(turn)
            if self.on_turn is not None and turn.phase in OBSERVED_PHASES:
                await self.on_turn(turn)
        self._phase_done([t for t in turns if t.phase in OBSERVED_PHASES])
        return turns

    def _phase_done(self, turns: list[TurnNode]) -> None:
        """Hand a phase's observed turns on as groups of siblings (turns by agents of
        one parent), in agent order, at most SIBLINGS_PER_CHECK to a group."""
        if self.on_phase is None or not turns:
            return

        def parent(turn: TurnNode) -> str | None:
            agent = self.tree.agents.get(turn.agent)
            return agent.parent if agent else None

        self.on_phase(sibling_groups(turns, parent))

    def _lines(self, phase: Phase, text: str) -> dict[str, float | str | None]:
        """What a turn's closing lines say: a lateral turn's stance; in a question
        session, a respond or lateral turn's answer and confidence."""
        found: dict[str, float | str | None] = {}
        if phase is Phase.LATERAL:
            found["stance"], found["because"] = lines.stance(text)
        if self.answering and phase in (Phase.RESPOND, Phase.LATERAL):
            found["answer"], found["confidence"] = lines.answer(text), lines.confidence(text)
        return found

    def _text(self, name: str) -> str:
        turn = self.latest.get(name)
        return turn.text if turn else ""

    async def _open_round(self, number: int, previous: RoundNode | None) -> RoundNode:
        st = self.state
        rnd = RoundNode(
            id=f"{self.debate.id}/r{number}",
            session=st.handles.session_id,
            debate=self.debate.id,
            number=number,
        )
        edges = [st.handles.edge(self.debate.id, rnd.id, EdgeType.HAS_ROUND)]
        if previous is not None:
            edges.append(st.handles.edge(previous.id, rnd.id, EdgeType.NEXT))
        if self.before_round is not None:
            await self.before_round(number)
        st.write([rnd], edges)
        self._traced = tracing.round_start(self.debate.id, number)
        st.handles.emit(RoundStarted(debate=self.debate.id, number=number))
        return rnd

    def _close_round(self, rnd: RoundNode) -> None:
        tracing.round_end(self.debate.id, self._traced)
        self._traced = None
        self.state.write([rnd])
        self.outcome.rounds = rnd.number
        if self.on_round is not None:
            self.on_round(rnd.number, rnd.root_output)

    async def _strange_loops(self, last: RoundNode, goal: str = "") -> None:
        """The strange loop: the root checks its answer against its children's texts and
        the debate's flags, and may leave it unchanged. The resolution is the root's
        output in parts; a disagreement the loop dropped is put back, and counted."""
        root = self.tree.root
        before = self.latest.get(root.name)
        start = lines.parse_parts(before.text) if before is not None else None
        unchanged = False
        loops = self.state.handles.config.strange_loops
        flags = await self.flags() if self.flags is not None and loops and before is not None else []
        children = [(c, self._text(c.name)) for c in self.tree.children(root.name) if c.name in self.latest]
        for i in range(1, loops + 1):
            own = self.latest.get(root.name)
            if own is None:
                break
            loop = self._turn(
                root,
                Phase.STRANGE_LOOP,
                last,
                ap.strange_loop(root, self.frame(), own.text, goal, children, flags),
                revises=own,
                turn_id=f"{last.id}/{root.name}/strange_loop{i}",
            )
            turns = await self._phase([loop])
            if turns and lines.is_unchanged(turns[0].text):
                self.latest[root.name] = own  # the answer stands: the loop's word is kept as its turn
                unchanged = True
                break
        final = self.latest.get(root.name)
        if final is None or start is None:
            self.outcome.resolution = self._text(root.name)
            return
        parts = lines.parse_parts(final.text)
        if final is not before:
            parts = lines.restore(start, parts)
        parts.unchanged = unchanged
        self.outcome.parts = parts
        self.outcome.source = final.text
        self.outcome.resolution = parts.render(final.text)
