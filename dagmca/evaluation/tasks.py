"""An evaluation's tasks: a JSONL file of questions, or a folder of passages.

Every problem with the input is found before any call is made and is one line naming
the file and the line, so a long eval never dies on its tenth task for a typo."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from dagmca.errors import UserError
from dagmca.graph.schema import Strict
from dagmca.jsonl import first_error, read_jsonl

Scoring = Literal["exact", "numeric", "choice", "judge"]
# the question asked of every passage of a folder: open, so its answers are judged in pairs
OPEN_QUESTION = "What does this passage claim, what does it assume, and what follows from it?"
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Task(Strict):
    """One question, with what scores its answer. `scoring` defaults from what is given:
    `choice` with choices, `exact` with an answer, else `judge` (no reference)."""

    id: str = Field(min_length=1, max_length=64)
    question: str = Field(min_length=1)
    passage: str | None = None
    answer: str | float | int | None = None
    choices: list[str] | None = None
    scoring: Scoring | None = None

    @model_validator(mode="after")
    def _rule(self) -> Task:
        if not _TASK_ID.match(self.id):
            raise ValueError(f"id {self.id!r}: use letters, digits, '.', '_' or '-'")
        if self.scoring is None:
            self.scoring = "choice" if self.choices else ("exact" if self.answer is not None else "judge")
        if self.scoring != "judge" and self.answer is None:
            raise ValueError(f"scoring {self.scoring!r} needs an answer")
        if self.scoring == "choice" and not self.choices:
            raise ValueError("scoring 'choice' needs choices")
        if self.scoring == "numeric" and not _is_number(self.answer):
            raise ValueError(f"scoring 'numeric' needs a numeric answer, not {self.answer!r}")
        return self

    @property
    def rule(self) -> Scoring:
        assert self.scoring is not None  # set by the validator
        return self.scoring

    @property
    def judged(self) -> bool:
        return self.scoring == "judge"


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    try:
        float(str(value).replace(",", ""))
    except ValueError:
        return False
    return True


def load_tasks(path: Path) -> list[Task]:
    """The tasks of a JSONL file or of a folder of .txt passages (one open question
    each, judged in pairs). Refuses an empty set and duplicate ids."""
    if not path.exists():
        raise UserError(f"tasks {path} do not exist", "give a JSONL file or a folder of .txt passages")
    tasks = _from_folder(path) if path.is_dir() else _from_jsonl(path)
    if not tasks:
        raise UserError(f"tasks {path}: no task found", "add one JSON object per line, or .txt files")
    return tasks


def _from_jsonl(path: Path) -> list[Task]:
    return read_jsonl(
        path,
        Task.model_validate,
        example='e.g. {"id": "t1", "question": "..."}',
        guide="see docs/guides/evaluation.md",
    )


def _from_folder(path: Path) -> list[Task]:
    tasks = []
    for file in sorted(path.glob("*.txt")):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{file}: cannot be read ({exc})", "passages are UTF-8 text") from None
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", file.stem).strip("-.")[:64] or "passage"
        try:
            tasks.append(Task(id=name, question=OPEN_QUESTION, passage=text, scoring="judge"))
        except ValidationError as exc:
            raise UserError(f"{file}: {first_error(exc)}") from None
    return tasks
