"""Peer protocols: `vote`, MassGen-style coordination, and `ensemble`.

vote: round 1, every agent answers alone (first-answer protection: nobody sees a
peer's answer before writing its own). Each later round, every agent that has not
voted sees the current answers under anonymous labels (agent2.1) and must choose
exactly one action: a vote for one answer, or a new answer. A mixed or missing
decision is rejected and asked again (`decision_retries`). A new answer resets every
vote (a `restart` turn) and reaches the peers next round. New answers are capped per
agent, in total, and by a fairness lead (no agent more than `fairness_lead` answers
ahead of the slowest). An agent that runs out of `agent_timeout_s` in a round is
wrapped up: its last answer stays a candidate, it stops being asked. Done when every
agent still in has voted, or after `max_vote_rounds`. The answer with most votes wins
(ties: the earliest posted); its author presents the final answer.

ensemble: independent answers; then every agent votes once, having seen them all;
the winner writes the final answer with the others' strongest points. 2n + 1 calls.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from typing import TypeVar

from dagmca.debate.engines.engine import Engine
from dagmca.debate.events import PeerStep
from dagmca.debate.outcomes import PeerOutcome, TrackerEvent
from dagmca.graph import Phase, RoundNode, TurnNode
from dagmca.prompts import peers as pp
from dagmca.prompts.agents import kept_parts
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import ballot_schema, decision_schema
from dagmca.team import Agent

T = TypeVar("T")


class TimedOut(Exception):
    pass


class PeerEngine(Engine[PeerOutcome]):
    """What vote and ensemble share: a flat team of peers and labelled answers."""

    def new_outcome(self) -> PeerOutcome:
        return PeerOutcome(protocol=self.protocol)

    def setup(self) -> None:
        self.peers: list[Agent] = self.tree.leaves
        self.number = {a.name: a.number for a in self.peers}
        self.answers: dict[str, list[TurnNode]] = {a.name: [] for a in self.peers}
        self.votes: dict[str, str] = {}  # agent -> the label it voted for
        self.seq: dict[str, int] = {}  # label -> the order it was posted in

    def _track(self, event: TrackerEvent) -> None:
        self.outcome.tracker.append(event)
        self.state.handles.emit(PeerStep(debate=self.debate.id, **vars(event)))

    def current(self) -> list[tuple[str, str]]:
        """Every agent's latest answer, labelled, in agent order."""
        return [
            (t.label or "", t.text) for a in self.peers if (turns := self.answers[a.name]) for t in turns[-1:]
        ]

    def _label(self, agent: Agent) -> str:
        return f"agent{self.number[agent.name]}.{len(self.answers[agent.name]) + 1}"

    def _post(
        self, agent: Agent, rnd: RoundNode, text: str, tokens: int, phase: Phase, degenerate: bool = False
    ) -> TurnNode:
        label = self._label(agent)
        previous = self.answers[agent.name][-1] if self.answers[agent.name] else None
        turn = self._record(
            agent, phase, rnd, text, tokens, revises=previous, label=label, degenerate=degenerate
        )
        self.answers[agent.name].append(turn)
        self.latest[agent.name] = turn
        self.seq[label] = len(self.seq)
        self._track(TrackerEvent(rnd.number, phase.value, agent.name, label=label))
        return turn

    async def _first_answer(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        kept = self.kept(agent.perspective)
        messages = pp.first_answer(agent, self.number[agent.name], self.frame(), kept_parts(kept))
        done = await self._call(agent, Phase.ANSWER, messages)
        if done is None:
            return None
        return self._post(agent, rnd, done.text, done.usage.total, Phase.ANSWER, bool(done.degenerate))

    def _tally(self) -> tuple[str, Counter[str]]:
        """The winning label: most votes, then the earliest posted (deterministic)."""
        labels = [label for label, _ in self.current()]
        counts = Counter(v for v in self.votes.values() if v in labels)
        winner = min(labels, key=lambda lab: (-counts[lab], self.seq[lab]))
        return winner, counts

    def _crown(self, rnd: RoundNode) -> tuple[Agent, str, list[tuple[str, str]]]:
        """The winner: its author, its text, and the other answers, labelled."""
        winner, counts = self._tally()
        author = self._author(winner)
        event = TrackerEvent(
            rnd.number, "winner", author.name, label=winner, detail=f"{counts[winner]} votes"
        )
        self._track(event)
        self.outcome.winner = winner
        others = [(label, text) for label, text in self.current() if label != winner]
        return author, dict(self.current())[winner], others

    def _author(self, label: str) -> Agent:
        return next(a for a in self.peers if self.answers[a.name] and self.answers[a.name][-1].label == label)


class VoteEngine(PeerEngine):
    protocol = "vote"

    def setup(self) -> None:
        super().setup()
        self.wrapped: set[str] = set()  # timed out: no longer asked
        self.new_answers: Counter[str] = Counter()

    # -- caps ------------------------------------------------------------------------
    def may_answer(self, agent: Agent) -> bool:
        cfg = self.state.handles.config
        total_cap = cfg.max_new_answers_total
        if total_cap is None:
            total_cap = cfg.max_new_answers_per_agent * len(self.peers)
        if self.new_answers[agent.name] >= cfg.max_new_answers_per_agent:
            return False
        if sum(self.new_answers.values()) >= total_cap:
            return False
        counts = [len(self.answers[a.name]) for a in self.peers if a.name not in self.wrapped]
        return len(self.answers[agent.name]) + 1 - min(counts) <= cfg.fairness_lead

    async def _timed(self, agent: Agent, work: Awaitable[T]) -> T:
        timeout = self.state.handles.config.agent_timeout_s
        if timeout is None:
            return await work
        try:
            return await asyncio.wait_for(work, timeout)
        except TimeoutError:
            raise TimedOut(agent.name) from None

    # -- one agent's decision -------------------------------------------------------------
    async def _decide(self, agent: Agent, rnd: RoundNode) -> tuple[str, str, str, int] | None:
        """Ask until the decision is exactly one valid action: (action, value, reason,
        tokens), or None. The schema offers only the current labels, and a new answer
        only while the caps allow one; a reply outside it (mixed, missing, unknown
        label) is rejected and asked again, with the reason."""
        cfg = self.state.handles.config
        answers = self.current()
        labels = [label for label, _ in answers]
        may_answer = self.may_answer(agent)
        schema = decision_schema(labels, may_answer, answer_chars=cfg.turn_tokens() * 6)
        own = self.answers[agent.name][-1].label or ""
        correction = ""
        for _ in range(cfg.decision_retries + 1):
            messages: Prompt = pp.decision(
                agent, self.number[agent.name], self.frame(), answers, own, may_answer, correction
            )
            done = await self._call(
                agent,
                Phase.VOTE,
                messages,
                schema=schema,
                max_tokens=cfg.turn_tokens() + pp.DECISION_EXTRA_TOKENS,
            )
            choice = getattr(done.parsed, "decision", None) if done is not None else None
            if done is None or choice is None:
                correction = "it was not exactly one of a vote or a new answer, as the JSON schema says"
                self._track(TrackerEvent(rnd.number, "rejected", agent.name, detail=correction))
                continue
            reason = str(choice.reason).strip()
            if choice.action == "vote":
                return ("vote", str(choice.vote_for), reason, done.usage.total)
            if not str(choice.new_answer).strip():
                correction = "action new_answer needs the answer in new_answer"
                self._track(TrackerEvent(rnd.number, "rejected", agent.name, detail=correction))
                continue
            return ("new_answer", str(choice.new_answer).strip(), reason, done.usage.total)
        return None

    async def _ask(self, agent: Agent, rnd: RoundNode) -> tuple[str, str, str, int] | None:
        if not self.answers[agent.name]:  # still protected: no peer answer before its own
            await self._first_answer(agent, rnd)
            return None
        return await self._decide(agent, rnd)

    async def _round_of(self, agent: Agent, rnd: RoundNode) -> tuple[str, str, str, int] | TimedOut | None:
        try:
            return await self._timed(agent, self._ask(agent, rnd))
        except TimedOut as exc:
            return exc

    # -- applying decisions, in agent order ---------------------------------------------
    async def _apply(self, agent: Agent, rnd: RoundNode, decision: tuple[str, str, str, int] | None) -> None:
        if decision is None:
            if self.answers[agent.name] and agent.name not in self.votes:
                self._track(TrackerEvent(rnd.number, "no_decision", agent.name))
            return
        action, value, reason, tokens = decision
        if action == "vote" and value not in dict(self.current()):
            # A peer replaced that answer earlier in this round: the vote was for an answer
            # that is gone, so it is not counted and the agent is asked again.
            self._track(
                TrackerEvent(rnd.number, "refused", agent.name, vote_for=value, detail="replaced answer")
            )
            return
        if action == "vote":
            self.votes[agent.name] = value
            text = f"votes for {value}: {reason}" if reason else f"votes for {value}"
            turn = self._record(agent, Phase.VOTE, rnd, text, tokens, vote_for=value)
            self.outcome.turns.append(turn)
            self._track(TrackerEvent(rnd.number, "vote", agent.name, vote_for=value, detail=reason))
            return
        if not self.may_answer(agent):  # a peer's answer earlier in this round used up the cap
            self._track(TrackerEvent(rnd.number, "refused", agent.name, detail="new answer over a cap"))
            return
        self.new_answers[agent.name] += 1
        turn = self._post(agent, rnd, value, tokens, Phase.NEW_ANSWER)
        await self._phase_turns([turn])
        if self.votes:
            reset = len(self.votes)
            self.votes.clear()
            note = self._record(
                agent,
                Phase.RESTART,
                rnd,
                f"new answer {turn.label} resets {reset} vote(s)",
                0,
                observes=[turn],
            )
            self.outcome.turns.append(note)
            self._track(
                TrackerEvent(rnd.number, "restart", agent.name, label=turn.label, detail=f"{reset} votes")
            )

    async def _phase_turns(self, turns: list[TurnNode]) -> None:
        """Hand turns written outside `_phase` on, as `_phase` does."""
        for turn in turns:
            self.outcome.turns.append(turn)
            if self.on_turn is not None:
                await self.on_turn(turn)
        self._phase_done(turns)

    def _wrap_up(self, agent: Agent, rnd: RoundNode) -> None:
        self.wrapped.add(agent.name)
        last = self.answers[agent.name][-1] if self.answers[agent.name] else None
        kept = f"keeps {last.label}" if last is not None else "had no answer yet"
        turn = self._record(agent, Phase.TIMEOUT, rnd, f"ran out of time; {kept}", 0)
        self.outcome.turns.append(turn)
        self._track(TrackerEvent(rnd.number, "timeout", agent.name, label=last.label if last else None))

    # -- the protocol ------------------------------------------------------------------
    async def run(self) -> PeerOutcome:
        cfg = self.state.handles.config
        rnd = await self._open_round(1, None)
        # Round 1: everyone answers alone, in parallel.
        results = await asyncio.gather(*(self._timed_first(a, rnd) for a in self.peers))
        await self._phase_turns([t for t in results if isinstance(t, TurnNode)])
        for agent, result in zip(self.peers, results, strict=True):
            if isinstance(result, TimedOut):
                self._wrap_up(agent, rnd)
        self._finish_round(rnd)
        for number in range(2, cfg.max_vote_rounds + 2):
            waiting = [a for a in self.peers if a.name not in self.wrapped and a.name not in self.votes]
            if not waiting or not self.current():
                break
            if self.state.handles.llm.exhausted(reserve_calls=len(waiting) + 1):
                break
            rnd = await self._open_round(number, rnd)
            decisions = await asyncio.gather(*(self._round_of(a, rnd) for a in waiting))
            for agent, decision in zip(waiting, decisions, strict=True):
                if isinstance(decision, TimedOut):
                    self._wrap_up(agent, rnd)
                else:
                    await self._apply(agent, rnd, decision)
            # first answers written late (after a failed or timed-out round 1)
            late = [t for a in waiting if (ts := self.answers[a.name]) for t in ts if t.round == number]
            await self._phase_turns([t for t in late if t.phase is Phase.ANSWER])
            self._finish_round(rnd)
        await self._present(rnd)
        return self.outcome

    async def _timed_first(self, agent: Agent, rnd: RoundNode) -> TurnNode | TimedOut | None:
        try:
            return await self._timed(agent, self._first_answer(agent, rnd))
        except TimedOut as exc:
            return exc

    def _finish_round(self, rnd: RoundNode) -> None:
        if self.current():
            winner, _ = self._tally()
            rnd.root_output = dict(self.current())[winner]
        self._close_round(rnd)

    async def _present(self, rnd: RoundNode) -> None:
        if not self.current():
            return
        active = [a for a in self.peers if a.name not in self.wrapped and self.answers[a.name]]
        self.outcome.converged = bool(active) and all(a.name in self.votes for a in active)
        author, own, others = self._crown(rnd)
        messages = pp.present(author, self.number[author.name], self.frame(), own, others)
        turn = await self._turn(
            author, Phase.PRESENT, rnd, messages, turn_id=f"{rnd.id}/{author.name}/present"
        )
        if turn is not None:
            await self._phase_turns([turn])
        self.outcome.resolution = turn.text if turn is not None else own


class EnsembleEngine(PeerEngine):
    protocol = "ensemble"

    async def _ballot(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        cfg = self.state.handles.config
        answers = self.current()
        labels = [label for label, _ in answers]
        for _ in range(cfg.decision_retries + 1):
            messages = pp.ballot(agent, self.number[agent.name], self.frame(), answers)
            done = await self._call(
                agent, Phase.VOTE, messages, schema=ballot_schema(labels), max_tokens=pp.DECISION_EXTRA_TOKENS
            )
            if done is None or done.parsed is None:
                self._track(TrackerEvent(rnd.number, "rejected", agent.name, detail="not a vote for a label"))
                continue
            vote = str(getattr(done.parsed, "vote_for", ""))
            reason = str(getattr(done.parsed, "reason", "")).strip()
            self.votes[agent.name] = vote
            self._track(TrackerEvent(rnd.number, "vote", agent.name, vote_for=vote, detail=reason))
            text = f"votes for {vote}: {reason}"
            return self._record(agent, Phase.VOTE, rnd, text, done.usage.total, vote_for=vote)
        return None

    async def run(self) -> PeerOutcome:
        cfg = self.state.handles.config
        rnd = await self._open_round(1, None)
        await self._phase([self._first_answer(a, rnd) for a in self.peers])
        self._close_round(rnd)
        if not self.current():
            return self.outcome
        rnd = await self._open_round(2, rnd)
        voters = self.peers[: cfg.ensemble_voters] if cfg.ensemble_voters is not None else self.peers
        await self._phase([self._ballot(a, rnd) for a in voters if self.answers[a.name]])
        author, own, others = self._crown(rnd)
        messages = pp.synthesize_winner(author, self.number[author.name], self.frame(), own, others)
        turns = await self._phase(
            [
                self._turn(
                    author, Phase.SYNTHESIZE, rnd, messages, turn_id=f"{rnd.id}/{author.name}/synthesize"
                )
            ]
        )
        self.outcome.resolution = turns[0].text if turns else own
        self.outcome.converged = True
        rnd.root_output = self.outcome.resolution
        self._close_round(rnd)
        return self.outcome
