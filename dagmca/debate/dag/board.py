"""What parallel branches know of each other.

Sibling branches run in lockstep by round: a branch starts round r only once every
sibling has finished round r-1 (or stopped), and it sees their round r-1 output, never
a later one. What a prompt says therefore depends on round numbers, not on which call
came back first, so a replay from the cache asks exactly the same questions.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from dagmca.graph import DebateNode, TensionNode
from dagmca.prompts.budget import Part, Quote

STUBS_SHOWN = 3


@dataclass
class BranchBoard:
    parent: DebateNode
    # (question, urgency) of the open stubs when the branches started.
    stubs: list[tuple[str, float]] = field(default_factory=list)
    questions: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[int, str]] = field(default_factory=dict)
    rounds_done: dict[str, int] = field(default_factory=dict)
    current: dict[str, int] = field(default_factory=dict)
    stopped: set[str] = field(default_factory=set)
    tags: dict[str, str] = field(default_factory=dict)  # branch id -> citation tag, "B2"
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def start(cls, parent: DebateNode, open_stubs: list[TensionNode]) -> BranchBoard:
        ranked = sorted(open_stubs, key=lambda t: (-t.urgency, t.id))[:STUBS_SHOWN]
        return cls(parent=parent, stubs=[(t.question, t.urgency) for t in ranked])

    def add(self, branch: DebateNode) -> None:
        self.questions[branch.id] = branch.question
        self.tags[branch.id] = f"B{len(self.tags) + 1}"
        self.outputs[branch.id] = {}
        self.rounds_done[branch.id] = 0

    async def before_round(self, branch_id: str, number: int) -> None:
        self.current[branch_id] = number
        while not all(
            self.rounds_done[b] >= number - 1 or b in self.stopped for b in self.questions if b != branch_id
        ):
            changed = self._changed
            await changed.wait()

    def update(self, branch_id: str, number: int, output: str) -> None:
        self.rounds_done[branch_id] = number
        if output:
            self.outputs[branch_id][number] = output
        self._notify()

    def stop(self, branch_id: str) -> None:
        self.stopped.add(branch_id)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def visible_outputs(self, branch_id: str) -> dict[str, str]:
        """Each other branch's latest output from before this branch's current round:
        nothing during round 1 (first-answer protection)."""
        upto = self.current.get(branch_id, 1) - 1
        visible = {}
        for b, by_round in self.outputs.items():
            seen = [r for r in by_round if r <= upto]
            if b != branch_id and seen:
                visible[b] = by_round[max(seen)]
        return visible

    def cited(self, branch_id: str, text: str) -> list[str]:
        """The other branches a text cites by tag, in tag order."""
        found = set(re.findall(r"\[(B\d+)\]", text))
        return [b for b, tag in self.tags.items() if tag in found and b != branch_id]

    def background(self, branch_id: str) -> list[Part]:
        """What a branch's prompts say of the DAG around it: the parent debate, the other
        branches with their latest visible output, the open stubs. Texts go whole (the
        budget cuts them first, oldest first, if it must)."""
        parts: list[Part] = [
            f"This is a branch debate. It branches from a debate on: {self.parent.question}",
            Quote("That debate's resolution", self.parent.resolution),
        ]
        others = [b for b in self.questions if b != branch_id]
        visible = self.visible_outputs(branch_id)
        if others:
            listed = "\n".join(f"- [{self.tags[b]}] {self.questions[b]}" for b in others)
            parts.append(
                f"You are branch [{self.tags[branch_id]}]. Other branches running now (cite one by "
                f"its tag, e.g. [B2], when you build on it or dispute it):\n{listed}"
            )
            parts += [
                Quote(f"The latest output of [{self.tags[b]}]", visible[b]) for b in others if b in visible
            ]
        if self.stubs:
            parts.append("Open questions not yet explored:\n" + "\n".join(f"- {q}" for q, _ in self.stubs))
        return parts
