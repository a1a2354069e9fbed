"""The MCA engine: one debate in rounds over an agent tree.

A round: leaves respond; leaves lateral; per internal level bottom-up, coordinators
observe their children then lateral among siblings; root observes; signals down;
convergence check. Then strange-loop passes at the root. Calls within one phase
are independent and run concurrently.

Second-seed options: `broadcast` (the root states the team's goal before round 1,
and every prompt carries it), `self_reflect` (after the root observes, every agent
rates its latest output 0-1 and may send a signal up; a critical signal makes the
parent re-broadcast a goal to its subtree, at most `max_iterations` times a debate).
"""

from __future__ import annotations

import json

from dagmca.debate.engines.convergence import no_change, sentences
from dagmca.debate.engines.engine import Engine
from dagmca.debate.outcomes import MCAOutcome, SignalEvent
from dagmca.graph import Phase, RoundNode, TurnNode
from dagmca.prompts import agents as ap
from dagmca.prompts import lines
from dagmca.prompts.schemas import Reflection
from dagmca.similarity import jaccard
from dagmca.similarity.counts import EmbedPhase
from dagmca.team import Agent

REFLECT_TOKENS = 110


class MCAEngine(Engine[MCAOutcome]):
    protocol = "mca"

    def new_outcome(self) -> MCAOutcome:
        return MCAOutcome(protocol=self.protocol)

    def setup(self) -> None:
        self.signals: dict[str, str] = {}  # child -> the nudge from its parent
        self.goals: dict[str, str] = {}  # agent -> the goal it aims at (broadcasts)
        self.broadcasts: dict[str, TurnNode] = {}  # agent -> its latest broadcast turn
        self.rebroadcasts = 0

    # -- the round ---------------------------------------------------------------
    async def _round(self, number: int, previous: RoundNode | None) -> RoundNode:
        cfg, tree = self.state.handles.config, self.tree
        rnd = await self._open_round(number, previous)
        single = tree.depth == 1
        if number == 1 and cfg.broadcast:
            await self._phase([self._broadcast(tree.root, rnd)])

        # 1. leaves respond
        await self._phase(
            [
                self._turn(
                    leaf,
                    Phase.RESPOND,
                    rnd,
                    ap.respond(
                        leaf,
                        self.frame(),
                        self._text(leaf.name),
                        self.signals.get(leaf.name, ""),
                        single,
                        self.goals.get(leaf.name, ""),
                        self.kept(leaf.perspective),
                        # a later round weighs the discussion: what its coordinator made of it
                        self._text(leaf.parent) if number > 1 and leaf.parent else "",
                        self.answering,
                    ),
                    revises=self.latest.get(leaf.name),
                )
                for leaf in tree.leaves
            ]
        )
        if self.answering:  # what the leaves answered alone, before the exchange
            said = [self.latest[leaf.name].answer for leaf in tree.leaves if leaf.name in self.latest]
            rnd.answers_before = json.dumps(lines.tally(said), ensure_ascii=False)
        # 2. leaves lateral, then 3. each internal level bottom-up
        await self._lateral(tree.leaves, rnd)
        if self.answering:  # the leaves' last answers of the round, tallied for the root
            said = [self.latest[leaf.name].answer for leaf in tree.leaves if leaf.name in self.latest]
            rnd.answers = json.dumps(lines.tally(said), ensure_ascii=False)
        for level in range(tree.depth - 2, 0, -1):
            coordinators = tree.level(level)
            await self._phase([self._observe(c, rnd) for c in coordinators])
            await self._lateral(coordinators, rnd)
        # 4. root observes
        if not single:
            await self._phase([self._observe(tree.root, rnd)])
        if cfg.convergence == "embedding" and cfg.rounds > 1:
            # the convergence check reads the root's output sentence by sentence after
            # the reflections and signals: queued now, it is embedded while they are asked
            self.state.handles.embedder.prefetch(sentences(self._text(tree.root.name)), soon=True)
        # (second seed) every agent reflects; critical signals make parents re-broadcast
        if cfg.self_reflect:
            await self._reflect(rnd)
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
            answering = self.answering and a.is_leaf
            messages = ap.lateral(a, self.frame(), own.text, seen, self.goals.get(a.name, ""), answering)
            calls.append(self._turn(a, Phase.LATERAL, rnd, messages, revises=own))
        await self._phase(calls)

    async def _observe(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        children = [c for c in self.tree.children(agent.name) if c.name in self.latest]
        previous = self.latest.get(agent.name)
        messages = ap.observe(
            agent,
            self.frame(),
            [(c, self._text(c.name)) for c in children],
            previous.text if previous else "",
            self.goals.get(agent.name, ""),
            self._positions() if rnd.answers and agent.parent is None else "",
        )
        observes = [self.latest[c.name] for c in children]
        return await self._turn(agent, Phase.OBSERVE, rnd, messages, revises=previous, observes=observes)

    def _positions(self) -> str:
        """The specialists' last answers of the round as positions, each with who holds
        it and their reasons: the root weighs reasons, it is shown no count to side with."""
        held = [
            (leaf.name, turn.answer, lines.reason_of(turn.text, turn.because))
            for leaf in self.tree.leaves
            if (turn := self.latest.get(leaf.name)) is not None
        ]
        return lines.positions(held)

    async def _signal(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        messages = ap.signal(agent, self.frame(), self._text(agent.name), self.goals.get(agent.name, ""))
        turn = await self._turn(agent, Phase.SIGNAL, rnd, messages, keep=False)
        if turn is not None:
            for child in agent.children:
                self.signals[child] = turn.text
        return turn

    # -- second-seed options ----------------------------------------------------------
    def _subtree(self, name: str) -> list[str]:
        names, todo = [], [name]
        while todo:
            current = todo.pop(0)
            names.append(current)
            todo.extend(self.tree.agents[current].children)
        return names

    async def _broadcast(
        self, agent: Agent, rnd: RoundNode, reason: str = "", observes: tuple[TurnNode, ...] = ()
    ) -> TurnNode | None:
        previous = self.broadcasts.get(agent.name)
        messages = ap.broadcast(agent, self.frame(), reason, previous.text if previous else "")
        turn = await self._turn(
            agent,
            Phase.BROADCAST,
            rnd,
            messages,
            revises=previous,
            observes=observes,
            turn_id=f"{rnd.id}/{agent.name}/{'rebroadcast' if reason else 'broadcast'}",
            keep=False,
        )
        if turn is not None:
            self.broadcasts[agent.name] = turn
            goal = turn.text
            for name in self._subtree(agent.name):
                self.goals[name] = goal
            if agent.parent is None and not reason:
                self.outcome.goal = goal
        return turn

    async def _reflect_one(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        own = self.latest.get(agent.name)
        if own is None:
            return None
        messages = ap.reflect(agent, self.frame(), own.text, self.goals.get(agent.name, ""))
        done = await self._call(agent, Phase.REFLECT, messages, schema=Reflection, max_tokens=REFLECT_TOKENS)
        if done is None or not isinstance(done.parsed, Reflection):
            return None
        r = done.parsed
        return self._record(
            agent,
            Phase.REFLECT,
            rnd,
            r.note,
            done.usage.total,
            observes=[own],
            satisfaction=r.satisfaction,
            signal_kind=r.signal,
        )

    async def _reflect(self, rnd: RoundNode) -> None:
        turns = await self._phase([self._reflect_one(a, rnd) for a in self.tree.agents.values()])
        critical: dict[str, list[tuple[SignalEvent, TurnNode]]] = {}
        for t in turns:
            if t.signal_kind in (None, "none"):
                continue
            parent = self.tree.agents[t.agent].parent
            event = SignalEvent(
                round=rnd.number,
                sender=t.agent,
                receiver=parent,
                kind=str(t.signal_kind),
                critical=t.signal_kind in ap.CRITICAL_SIGNALS,
                note=t.text,
            )
            self.outcome.signal_chain.append(event)
            if event.critical and parent is not None:
                critical.setdefault(parent, []).append((event, t))
        # Parents in tree order, so which ones fit under --max-iterations is deterministic.
        calls = []
        for parent, received in critical.items():
            if self.rebroadcasts >= self.state.handles.config.max_iterations:
                break
            self.rebroadcasts += 1
            calls.append(self._rebroadcast(self.tree.agents[parent], rnd, received))
        await self._phase(calls)

    async def _rebroadcast(
        self, parent: Agent, rnd: RoundNode, received: list[tuple[SignalEvent, TurnNode]]
    ) -> TurnNode | None:
        reason = "\n".join(f"{e.sender} ({e.kind}): {e.note}" for e, _ in received)
        turn = await self._broadcast(parent, rnd, reason, tuple(t for _, t in received))
        for event, _ in received:
            event.rebroadcast = turn.id if turn is not None else None
        return turn

    # -- the debate ---------------------------------------------------------------------
    async def _convergence(self, before: str, after: str) -> float:
        """How far the root's output stayed the same: by default, how closely each
        sentence of either round's output is matched in the other (convergence.py)."""
        if self.state.handles.config.convergence == "embedding":
            return await no_change(self.state.handles.embedder, before, after, phase=EmbedPhase.CONVERGENCE)
        return jaccard(before, after)

    async def run(self) -> MCAOutcome:
        st, cfg = self.state, self.state.handles.config
        previous: RoundNode | None = None
        for number in range(1, cfg.rounds + 1):
            # Near a budget a running debate finishes the round it is in, and starts no other.
            if number > 1 and st.handles.llm.exhausted(reserve_calls=cfg.per_round_calls() + 1):
                break
            previous_answers = previous.answers if previous is not None else None
            rnd = await self._round(number, previous)
            if previous is not None and previous.root_output and rnd.root_output:
                rnd.convergence_score = round(
                    await self._convergence(previous.root_output, rnd.root_output), 4
                )
                self.outcome.scores.append(rnd.convergence_score)
            self._close_round(rnd)
            previous = rnd
            # in a question session a changed answer tally is a material change, whatever
            # the wording (a reversal in the same words is the one an embedding misses)
            same_answers = not self.answering or (previous_answers == rnd.answers)
            if (
                rnd.convergence_score is not None
                and rnd.convergence_score >= cfg.convergence_threshold
                and same_answers
            ):
                self.outcome.converged = True
                break
        assert previous is not None
        await self._strange_loops(previous, self.goals.get(self.tree.root.name, ""))
        return self.outcome
