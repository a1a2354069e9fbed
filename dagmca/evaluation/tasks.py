"""An evaluation's tasks: a JSONL file of questions, or a folder of passages.

Every problem with the input is found before any call is made and is one line naming
the file and the line, so a long eval never dies on its tenth task for a typo."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import Field, ValidationError, model_validator

from dagmca.errors import UserError
from dagmca.graph.schema import Strict

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


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


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
        _first_error,
        example='e.g. {"id": "t1", "question": "..."}',
        guide="see docs/guides/evaluation.md",
    )


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_Identified)


def read_jsonl(
    path: Path,
    validate: Callable[[dict[str, Any]], T],
    first_error: Callable[[ValidationError], str],
    *,
    example: str,
    guide: str,
) -> list[T]:
    """The objects of a JSONL file of tasks, in order, each validated; a line that is no
    JSON object, fails validation or repeats an id is one line naming its place."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"tasks {path} cannot be read: {exc}", "give a UTF-8 JSONL file") from None
    tasks: list[T] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not JSON ({exc.msg})", "one JSON object per line") from None
        if not isinstance(data, dict):
            raise UserError(f"{where}: a task is a JSON object", example)
        try:
            task = validate(data)
        except ValidationError as exc:
            raise UserError(f"{where}: {first_error(exc)}", guide) from None
        if task.id in seen:
            raise UserError(f"{where}: duplicate id {task.id!r} (first on line {seen[task.id]})")
        seen[task.id] = number
        tasks.append(task)
    return tasks


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
            raise UserError(f"{file}: {_first_error(exc)}") from None
    return tasks
