"""The MCA engine: one debate in rounds over an agent tree (DESIGN §2).

A round: leaves respond; leaves lateral; per internal level bottom-up, coordinators
observe their children then lateral among siblings; root observes; signals down;
convergence check. Then strange-loop passes at the root. Calls within one phase
are independent and run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from dagmca.debate.agents import Agent, AgentTree, build_tree
from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta, Message
from dagmca.models import DebateNode, EdgeRecord, EdgeType, Phase, RoundNode, TurnNode
from dagmca.prompts import templates as tpl
from dagmca.prompts.text import clip, tidy
from dagmca.similarity import jaccard

TurnHook = Callable[[TurnNode], Awaitable[None]]
RoundHook = Callable[[int, str], None]
BeforeRoundHook = Callable[[int], Awaitable[None]]


@dataclass
class DebateOutcome:
    resolution: str
    rounds: int
    converged: bool
    scores: list[float] = field(default_factory=list)
    turns: list[TurnNode] = field(default_factory=list)


class MCAEngine:
    def __init__(
        self,
        state: SessionState,
        debate: DebateNode,
        frame: Callable[[], tpl.Frame],
        *,
        on_turn: TurnHook | None = None,
        on_round: RoundHook | None = None,
        before_round: BeforeRoundHook | None = None,
    ) -> None:
        cfg = state.config
        self.state = state
        self.debate = debate
        self.frame = frame  # called per prompt: branch background changes while we run
        self.tree: AgentTree = build_tree(cfg.cpp, cfg.depth, cfg.perspectives)
        self.on_turn = on_turn
        self.on_round = on_round
        self.before_round = before_round
        self.latest: dict[str, TurnNode] = {}  # agent -> its latest turn
        self.signals: dict[str, str] = {}  # child -> signal text from its parent
        self.outcome = DebateOutcome(resolution="", rounds=0, converged=False)

    # -- one call, recorded as a Turn --------------------------------------------
    async def _turn(
        self,
        agent: Agent,
        phase: Phase,
        rnd: RoundNode,
        messages: list[Message],
        *,
        revises: TurnNode | None = None,
        observes: list[TurnNode] | None = None,
        turn_id: str | None = None,
    ) -> TurnNode | None:
        st, cfg = self.state, self.state.config
        meta = CallMeta(agent=agent.name, debate=self.debate.id, phase=phase.value)
        done = await st.ask(messages, max_tokens=cfg.turn_tokens(), meta=meta)
        if done is None:
            return None
        text = tidy(done.text) or "(no answer)"
        revised = revises is not None and jaccard(text, revises.text) < 0.9
        turn = TurnNode(
            id=turn_id or f"{rnd.id}/{agent.name}/{phase.value}",
            session=st.session_id,
            debate=self.debate.id,
            agent=agent.name,
            role=agent.role,
            perspective=agent.perspective,
            phase=phase,
            round=rnd.number,
            text=text,
            revised=revised,
            tokens=done.usage.total,
        )
        edges: list[EdgeRecord] = [
            st.edge(turn.id, rnd.id, EdgeType.IN_ROUND),
            st.edge(turn.id, st.agent_id(agent.name), EdgeType.BY),
        ]
        if revises is not None:
            edges.append(st.edge(turn.id, revises.id, EdgeType.REVISES))
        edges += [st.edge(turn.id, o.id, EdgeType.OBSERVES) for o in observes or []]
        agent_node = st.agent_node(agent.name, agent.role, agent.perspective, agent.level)
        st.write([*([agent_node] if agent_node else []), turn], edges)
        st.events.emit("turn", debate=self.debate.id, agent=agent.name, phase=phase.value)
        if phase is not Phase.SIGNAL:
            self.latest[agent.name] = turn
        return turn

    async def _phase(self, calls: Sequence[Awaitable[TurnNode | None]]) -> None:
        """Run a phase's calls concurrently, then hand the turns on in agent order, never
        in completion order: what observers and other branches see must not depend on
        latency, or a replay from the cache (resume, re-run) would ask different questions."""
        for turn in await asyncio.gather(*calls):
            if turn is None:
                continue
            self.outcome.turns.append(turn)
            if self.on_turn is not None:
                await self.on_turn(turn)

    def _text(self, name: str) -> str:
        turn = self.latest.get(name)
        return turn.text if turn else ""

    # -- the round ---------------------------------------------------------------
    async def _round(self, number: int, previous: RoundNode | None) -> RoundNode:
        st, cfg, tree = self.state, self.state.config, self.tree
        rnd = RoundNode(
            id=f"{self.debate.id}/r{number}", session=st.session_id, debate=self.debate.id, number=number
        )
        edges = [st.edge(self.debate.id, rnd.id, EdgeType.HAS_ROUND)]
        if previous is not None:
            edges.append(st.edge(previous.id, rnd.id, EdgeType.NEXT))
        if self.before_round is not None:
            await self.before_round(number)
        st.write([rnd], edges)
        st.events.emit("round", debate=self.debate.id, number=number)
        frame = self.frame

        # 1. leaves respond
        single = tree.depth == 1
        await self._phase(
            [
                self._turn(
                    leaf,
                    Phase.RESPOND,
                    rnd,
                    tpl.respond(
                        leaf, frame(), self._text(leaf.name), self.signals.get(leaf.name, ""), single
                    ),
                    revises=self.latest.get(leaf.name),
                )
                for leaf in tree.leaves
            ]
        )
        # 2. leaves lateral, then 3. each internal level bottom-up
        await self._lateral(tree.leaves, rnd)
        for level in range(tree.depth - 2, 0, -1):
            coordinators = tree.level(level)
            await self._phase([self._observe(c, rnd) for c in coordinators])
            await self._lateral(coordinators, rnd)
        # 4. root observes
        if not single:
            await self._phase([self._observe(tree.root, rnd)])
        # 5. signals down
        if cfg.signals and not single:
            await self._phase([self._signal(a, rnd) for a in tree.agents.values() if not a.is_leaf])
        rnd.root_output = self._text(tree.root.name)
        return rnd

    async def _lateral(self, agents: list[Agent], rnd: RoundNode) -> None:
        tree = self.tree
        calls = []
        for a in agents:
            sibs = tree.siblings(a.name)
            own = self.latest.get(a.name)
            if not sibs or own is None:  # an only child skips lateral: no call
                continue
            seen = [(s, self._text(s.name)) for s in sibs if s.name in self.latest]
            calls.append(
                self._turn(a, Phase.LATERAL, rnd, tpl.lateral(a, self.frame(), own.text, seen), revises=own)
            )
        await self._phase(calls)

    async def _observe(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        children = [c for c in self.tree.children(agent.name) if c.name in self.latest]
        seen = [self.latest[c.name] for c in children]
        previous = self.latest.get(agent.name)
        return await self._turn(
            agent,
            Phase.OBSERVE,
            rnd,
            tpl.observe(
                agent,
                self.frame(),
                [(c, self._text(c.name)) for c in children],
                previous.text if previous else "",
            ),
            revises=previous,
            observes=seen,
        )

    async def _signal(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        turn = await self._turn(
            agent, Phase.SIGNAL, rnd, tpl.signal(agent, self.frame(), self._text(agent.name))
        )
        if turn is not None:
            for child in agent.children:
                self.signals[child] = clip(turn.text, tpl.SIGNAL_CHARS)
        return turn

    def _convergence(self, before: str, after: str) -> float:
        if self.state.config.convergence == "embedding":
            return self.state.embedder.similarity(before, after)
        return jaccard(before, after)

    async def run(self) -> DebateOutcome:
        st, cfg = self.state, self.state.config
        previous: RoundNode | None = None
        for number in range(1, cfg.rounds + 1):
            # Near a budget a running debate finishes the round it is in, and starts no other.
            if number > 1 and st.llm.exhausted(reserve_calls=cfg.per_round_calls() + 1):
                break
            rnd = await self._round(number, previous)
            if previous is not None and previous.root_output and rnd.root_output:
                rnd.convergence_score = round(self._convergence(previous.root_output, rnd.root_output), 4)
                self.outcome.scores.append(rnd.convergence_score)
            st.write([rnd])
            self.outcome.rounds = number
            if self.on_round is not None:
                self.on_round(number, rnd.root_output)
            previous = rnd
            if rnd.convergence_score is not None and rnd.convergence_score >= cfg.convergence_threshold:
                self.outcome.converged = True
                break
        root = self.tree.root
        assert previous is not None
        for i in range(1, cfg.strange_loops + 1):
            own = self.latest.get(root.name)
            if own is None:
                break
            loop = self._turn(
                root,
                Phase.STRANGE_LOOP,
                previous,
                tpl.strange_loop(root, self.frame(), own.text),
                revises=own,
                turn_id=f"{previous.id}/{root.name}/strange_loop{i}",
            )
            await self._phase([loop])
        self.outcome.resolution = self._text(root.name)
        return self.outcome
