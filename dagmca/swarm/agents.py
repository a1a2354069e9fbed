"""Agents as contexts on one shared model: an agent is its system prompt and the tasks
it solved, nothing else. Its prompt is the system prompt, then its own solved examples
(the task's type first, capped in tokens), then the task.

Two extension points of the seed are options: negative examples (failures shown as
"this answer was wrong", after the solved ones) and the weighting of the examples
(`type`: same type first, newest first within; `recency`: newest first whatever the
type)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dagmca.llm.base import Message
from dagmca.llm.tokens import TokenCounter
from dagmca.swarm.tasks import SwarmTask

Weighting = Literal["type", "recency"]
SYSTEM = (
    "You solve one task at a time. Below are tasks you solved before, with your accepted answers: "
    "follow their form. For a question, end with the answer alone on the last line, as 'Answer: ...'. "
    "For a programming task, reply with one Python code block that defines the function asked for, "
    "and nothing the tests did not ask for."
)


@dataclass(frozen=True)
class Example:
    task_type: str
    prompt: str
    answer: str
    success: bool
    position: int  # when it was attempted in the stream


@dataclass
class Agent:
    name: str
    examples: list[Example] = field(default_factory=list)  # in the order attempted

    def solved(self, task_type: str | None = None) -> list[Example]:
        return [e for e in self.examples if e.success and (task_type is None or e.task_type == task_type)]

    def context_text(self) -> str:
        """What the agent's context holds: its solved examples' text (for divergence)."""
        return "\n\n".join(f"{e.prompt}\n{e.answer}" for e in self.solved())


@dataclass(frozen=True)
class ContextOptions:
    examples: int = 4  # at most this many solved examples in a prompt
    max_tokens: int = 1500  # and at most this many tokens of them
    negatives: int = 0  # failures shown, after the solved ones
    weighting: Weighting = "type"


def choose_examples(agent: Agent, task: SwarmTask, options: ContextOptions) -> list[Example]:
    """The examples that go into the prompt for `task`, most relevant first."""
    newest_first = sorted(agent.examples, key=lambda e: -e.position)
    if options.weighting == "type":
        newest_first.sort(key=lambda e: e.task_type != task.type)  # stable: same type first, newest first
    good = [e for e in newest_first if e.success][: options.examples]
    bad = [e for e in newest_first if not e.success and e.task_type == task.type][: options.negatives]
    return good + bad


def messages(agent: Agent, task: SwarmTask, options: ContextOptions, counter: TokenCounter) -> list[Message]:
    """System prompt, the chosen examples while they fit in `max_tokens`, the task."""
    parts: list[Message] = [{"role": "system", "content": SYSTEM}]
    used = 0
    for example in choose_examples(agent, task, options):
        note = "" if example.success else "\n(This answer was wrong.)"
        pair: list[Message] = [
            {"role": "user", "content": example.prompt},
            {"role": "assistant", "content": example.answer + note},
        ]
        cost = sum(counter.count(m["content"]) for m in pair)
        if used + cost > options.max_tokens:
            continue  # a long one is skipped, a shorter one after it may still fit
        used += cost
        parts += pair
    parts.append({"role": "user", "content": task.text})
    return parts
