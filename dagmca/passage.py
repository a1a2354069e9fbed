"""Reading a passage: every bad input is a UserError, found before any cost is spent."""

from __future__ import annotations

from pathlib import Path

from dagmca.errors import UserError
from dagmca.text import clip

MAX_QUESTION_BYTES = 20_000  # a question, not a passage: longer text belongs in the passage


def read_passage(path: Path, max_bytes: int) -> str:
    if not path.exists():
        raise UserError(f"passage file {path} does not exist", "give the path of a UTF-8 text file")
    if path.is_dir():
        raise UserError(f"passage {path} is a directory", "give the path of a UTF-8 text file")
    size = path.stat().st_size
    if size > max_bytes:
        raise UserError(
            f"passage {path} is {size:,} bytes, over the limit of {max_bytes:,}",
            "shorten it, or raise --max-passage-bytes",
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read passage {path}: {exc.strerror}", "check its permissions") from exc
    if b"\x00" in data:
        raise UserError(f"passage {path} looks binary (it contains NUL bytes)", "give a UTF-8 text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"passage {path} is not valid UTF-8 (byte {exc.start})", "convert it to UTF-8, e.g. with iconv"
        ) from exc
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise UserError(f"passage {path} is empty", "give a file with some text in it")
    return text


def title_of(text: str, fallback: str) -> str:
    lines = text.strip().splitlines()
    first = lines[0].strip().lstrip("#").strip() if lines else ""
    if not first:
        return fallback
    return first if len(first) <= 80 else clip(first, 78)


def check_text(text: str, max_bytes: int, what: str = "passage") -> str:
    """A passage handed in as a string (the Python API): the same checks as a file's."""
    if not isinstance(text, str):
        raise UserError(f"the {what} must be a str, not {type(text).__name__}", "pass the text itself")
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise UserError(
            f"the {what} is {size:,} bytes, over the limit of {max_bytes:,}",
            "shorten it, or raise max_passage_bytes",
        )
    if "\x00" in text:
        raise UserError(f"the {what} contains NUL characters", "pass text, not binary data")
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise UserError(f"the {what} is empty", "pass some text")
    return text
