"""What parallel branches know of each other (DESIGN §1.5)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagmca.models import DebateNode, TensionNode
from dagmca.prompts.text import clip

OUTPUT_CHARS = 250
STUBS_SHOWN = 3


@dataclass
class BranchBoard:
    parent: DebateNode
    questions: dict[str, str] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)
    rounds_done: dict[str, int] = field(default_factory=dict)

    def add(self, branch: DebateNode) -> None:
        self.questions[branch.id] = branch.question
        self.rounds_done[branch.id] = 0

    def update(self, branch_id: str, number: int, output: str) -> None:
        self.rounds_done[branch_id] = number
        if output:
            self.latest[branch_id] = output

    def visible_outputs(self, branch_id: str) -> dict[str, str]:
        """Other branches' latest round output: only once this branch has finished
        its own first round (first-answer protection)."""
        if self.rounds_done.get(branch_id, 0) < 1:
            return {}
        return {b: out for b, out in self.latest.items() if b != branch_id}

    def background(self, branch_id: str, stubs: list[TensionNode]) -> str:
        lines = [
            f"This is a branch debate. Parent question: {clip(self.parent.question, 300)}",
            f"Parent resolution: {clip(self.parent.resolution, 400)}",
        ]
        others = [b for b in self.questions if b != branch_id]
        visible = self.visible_outputs(branch_id)
        if others:
            lines.append("Other branches running now:")
            for b in others:
                lines.append(f"- {clip(self.questions[b], 200)}")
                if b in visible:
                    lines.append(f"  latest output: {clip(visible[b], OUTPUT_CHARS)}")
        open_stubs = sorted(stubs, key=lambda t: -t.urgency)[:STUBS_SHOWN]
        if open_stubs:
            lines.append("Open questions not yet explored:")
            lines += [f"- {clip(t.question, 200)}" for t in open_stubs]
        return "\n".join(lines)
