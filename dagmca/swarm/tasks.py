"""A swarm's stream: one JSON object per line, in the order the swarm meets them.

Two checks, told apart by what a task gives (or by `check`):

- `reference`: eval's task (`question`, `answer`, optional `choices`, `scoring`) plus
  its `type`; scored as `dagmca eval` scores it;
- `code`: `{id, type, prompt, tests, entry_point}` in the HumanEval/MBPP shape; the
  answer's code is checked by `tests` (Python: asserts on the entry point, or a
  `check(candidate)` function, called with it) in the executor, where the tests call
  the answer's function through a proxy that passes only data.

`type` is the task's category: what the router's affinity and the metrics count by.
Every problem is found before any call, one line naming the file and the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from dagmca.errors import UserError
from dagmca.evaluation.scoring import DEFAULT_TOLERANCE, score
from dagmca.evaluation.tasks import Scoring, Task
from dagmca.graph.schema import Strict
from dagmca.jsonl import read_jsonl
from dagmca.prompts.lines import answer

Check = Literal["reference", "code"]
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


class SwarmTask(Strict):
    id: str = Field(min_length=1, max_length=64)
    type: str = Field(min_length=1, max_length=64)
    check: Check | None = None
    prompt: str | None = None
    question: str | None = None
    answer: str | float | int | None = None
    choices: list[str] | None = None
    scoring: Scoring | None = None
    tests: str | list[str] | None = None
    entry_point: str | None = None
    solution: str | None = None  # a reference solution of a code task (checked by the tests)

    @model_validator(mode="after")
    def _valid(self) -> SwarmTask:
        if not _SLUG.match(self.id):
            raise ValueError(f"id {self.id!r}: use letters, digits, '.', '_' or '-'")
        if not _SLUG.match(self.type):
            raise ValueError(f"type {self.type!r}: use letters, digits, '.', '_' or '-'")
        if self.check is None:
            self.check = "code" if self.tests is not None else "reference"
        if not self.text.strip():
            raise ValueError("a task needs a prompt (or a question)")
        if self.check == "code":
            if not self.tests:
                raise ValueError("a code task needs tests")
            if not self.entry_point or not _IDENT.match(self.entry_point):
                raise ValueError("a code task needs an entry_point, the function's name")
        else:
            if self.answer is None:
                raise ValueError("a task needs tests (code) or an answer (reference)")
            self.reference_task()  # eval's own rules for the reference
        return self

    @property
    def text(self) -> str:
        return self.prompt or self.question or ""

    @property
    def is_code(self) -> bool:
        return self.check == "code"

    def reference_task(self) -> Task:
        """The task as `dagmca eval` reads it, to score the answer the same way."""
        return Task(
            id=self.id, question=self.text, answer=self.answer, choices=self.choices, scoring=self.scoring
        )

    def test_code(self) -> str:
        tests = self.tests if isinstance(self.tests, str) else "\n".join(self.tests or [])
        if re.search(r"^def check\(", tests, re.MULTILINE):
            tests += f"\n\ncheck({self.entry_point})\n"
        return tests


def extract_code(answer: str) -> str:
    """The code of a reply: its fenced blocks joined, or the whole reply when it has none."""
    blocks = _FENCE.findall(answer)
    return "\n\n".join(b.strip() for b in blocks) if blocks else answer.strip()


def score_reference(task: SwarmTask, reply: str, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """The reply's answer line (its last 'Answer:'; the whole reply without one) scored
    as `dagmca eval` scores it: working shown above the line does not count."""
    return bool(score(task.reference_task(), answer(reply) or reply, tolerance).correct)


def load_stream(path: Path) -> list[SwarmTask]:
    """The tasks of a JSONL file, in order. Refuses an empty stream and duplicate ids."""
    if not path.is_file():
        raise UserError(f"tasks {path} do not exist", "give a JSONL file of tasks")
    tasks = read_jsonl(
        path,
        SwarmTask.model_validate,
        example='e.g. {"id": "t1", "type": "math", ...}',
        guide="see docs/guides/swarm.md",
    )
    if not tasks:
        raise UserError(f"tasks {path}: no task found", "add one JSON object per line")
    return tasks
