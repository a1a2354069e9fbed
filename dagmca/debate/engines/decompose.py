"""The top-down baseline (`--protocol decompose`), the control MCA must beat.

One pass, as the seed's legacy mode: every non-leaf splits its task into one subtask
per child (level by level, from the root down), the leaves answer their subtasks, the
root synthesizes every answer, then the strange loop. Calls: one per non-leaf, one
per leaf, one synthesis, plus the strange loops (cpp=3, depth=2: 5 + N; cpp=2,
depth=3: 8 + N). Depth 1 is a single agent answering the question: 1 + N.
"""

from __future__ import annotations

from dagmca.debate.engines.engine import Engine
from dagmca.debate.outcomes import DecomposeOutcome
from dagmca.graph import Phase, RoundNode, TurnNode
from dagmca.prompts import agents as ap
from dagmca.prompts.schemas import Subtasks
from dagmca.team import Agent

SUBTASK_TOKENS = 60  # per subtask; a decomposition asks for cpp of them


class DecomposeEngine(Engine[DecomposeOutcome]):
    protocol = "decompose"

    def new_outcome(self) -> DecomposeOutcome:
        return DecomposeOutcome(protocol=self.protocol)

    def setup(self) -> None:
        self.tasks: dict[str, str] = {}  # agent -> the task its parent gave it

    async def _decompose(self, agent: Agent, rnd: RoundNode) -> TurnNode | None:
        task = self.tasks[agent.name]
        cpp = len(agent.children)
        messages = ap.decompose(agent, self.frame(), task, cpp)
        done = await self._call(
            agent, Phase.DECOMPOSE, messages, schema=Subtasks, max_tokens=SUBTASK_TOKENS * cpp + 20
        )
        given = done.parsed.subtasks if done is not None and isinstance(done.parsed, Subtasks) else []
        subtasks = [s.strip() for s in given if s.strip()][:cpp]
        # A failed call or a short list still leaves every child with a task: the parent's own.
        subtasks += [f"{task} (part {k} of {cpp})" for k in range(len(subtasks) + 1, cpp + 1)]
        for child, subtask in zip(agent.children, subtasks, strict=True):
            self.tasks[child] = subtask
            self.outcome.subtasks[child] = subtask
        if done is None:
            return None
        text = "\n".join(f"{i}. {s}" for i, s in enumerate(subtasks, start=1))
        return self._record(agent, Phase.DECOMPOSE, rnd, text, done.usage.total)

    async def _answer(self, leaf: Agent, rnd: RoundNode) -> TurnNode | None:
        messages = ap.answer_subtask(leaf, self.frame(), self.tasks[leaf.name])
        return await self._turn(leaf, Phase.RESPOND, rnd, messages)

    async def run(self) -> DecomposeOutcome:
        tree, frame = self.tree, self.frame
        rnd = await self._open_round(1, None)
        root = tree.root
        if tree.depth == 1:
            await self._phase([self._turn(root, Phase.RESPOND, rnd, ap.respond(root, frame(), single=True))])
        else:
            self.tasks[root.name] = frame().question
            for level in range(tree.depth - 1):
                await self._phase([self._decompose(a, rnd) for a in tree.level(level)])
            answers = await self._phase([self._answer(leaf, rnd) for leaf in tree.leaves])
            messages = ap.synthesize_answers(
                root, frame(), [(t.agent, self.tasks[t.agent], t.text) for t in answers]
            )
            await self._phase([self._turn(root, Phase.SYNTHESIZE, rnd, messages, observes=answers)])
        rnd.root_output = self._text(root.name)
        self._close_round(rnd)
        await self._strange_loops(rnd)
        return self.outcome
