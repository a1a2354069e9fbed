"""Reading a JSONL file of tasks a user wrote (an eval's, a swarm's stream): every line
validated, and every problem one UserError naming the file and the line, found before
any call is made, so a long run never dies on its tenth task for a typo."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from dagmca.errors import UserError


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_Identified)


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as one phrase: `field: message`; a value outside
    a field's choices as `unknown field 'value'` with the choices; a model's own check
    (its message names what it checked) as its message alone."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "literal_error" and where:
        expected = (first.get("ctx") or {}).get("expected", "")
        return f"unknown {where} {first.get('input')!r} (one of {expected})"
    return f"{where}: {message}" if where and first["type"] != "value_error" else message


def read_jsonl(path: Path, validate: Callable[[dict[str, Any]], T], *, example: str, guide: str) -> list[T]:
    """The objects of a JSONL file of tasks, in order, each validated; a line that is no
    JSON object, fails validation or repeats an id is one line naming its place
    (`example`: a line as it should be; `guide`: where the format is described)."""
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
