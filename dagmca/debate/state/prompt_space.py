"""What a session's prompts may hold: the budgets in the model's tokens, and the passage
as the prompts give it (whole, or in sections)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dagmca.graph import DebateNode, SectionNode
from dagmca.llm.tokens import ContextWindow
from dagmca.prompts.budget import Part, PromptBudget
from dagmca.prompts.templates import Frame

FrameFactory = Callable[[], Frame]


@dataclass(eq=False)
class PromptSpace:
    budget: PromptBudget  # what a prompt may hold, in the model's tokens
    window: ContextWindow
    default_block: str  # the passage block of a debate without one of its own
    # the judge role's, when its model's window is not the debate model's
    judge_budget: PromptBudget | None = None
    # the passage in prompts: whole, or (long passages) sections, mapped and retrieved
    passage_mode: str = "whole"
    passage_tokens: int = 0
    sections: list[SectionNode] = field(default_factory=list)
    passage_blocks: dict[str, str] = field(default_factory=dict)  # debate id -> its passage block

    def frame(
        self, debate: DebateNode, background: Callable[[], Sequence[Part]] | None = None
    ) -> FrameFactory:
        """What every prompt of `debate` carries, built per prompt (a branch's background
        changes while it runs)."""

        def build() -> Frame:
            return Frame(
                question=debate.question,
                passage=self.passage_blocks.get(debate.id, self.default_block),
                budget=self.budget,
                background=tuple(background()) if background else (),
                judge=self.judge_budget,
            )

        return build
