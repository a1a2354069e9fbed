"""The passages of a build: files, folders (recursively, `*.txt` and `*.md`) and JSONL
files of `{"id", "text"}`, each with a stable session id derived from its name or id.

A passage that cannot be read, or repeats an id or a text seen before, is reported
with one line and left out; the rest go on."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from dagmca.errors import UserError
from dagmca.passage import read_passage, title_of

SUFFIXES = (".txt", ".md")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ID = 64


@dataclass(frozen=True)
class Passage:
    id: str  # the session's id
    source: str  # where it came from: a file, or `file.jsonl#id`
    text: str
    title: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class Skipped:
    source: str
    reason: str


def session_id(name: str, text: str) -> str:
    """`name` as a session id (letters, digits, '.', '_', '-'; at most 64), or one made
    from the text when nothing of the name is left."""
    slug = _UNSAFE.sub("-", name).strip("-._")[:MAX_ID].rstrip("-._")
    return slug or "passage-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def _files(path: Path) -> list[tuple[Path, str]]:
    """(file, name) for a file, or for every text file under a folder, in a stable order;
    the name of a file in a folder is its path below it ("sub/a.txt" -> "sub-a")."""
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        return [(p, str(p.relative_to(path).with_suffix("")).replace("/", "-")) for p in found]
    return [(path, path.stem)]


def _jsonl(path: Path, max_bytes: int) -> tuple[list[Passage], list[Skipped]]:
    passages: list[Passage] = []
    skipped: list[Skipped] = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Skipped(str(path), f"cannot be read as UTF-8 JSONL ({exc})")]
    for number, line in enumerate(lines, 1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            skipped.append(Skipped(where, "not a JSON object"))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            skipped.append(Skipped(where, 'not an object with a "text" string'))
            continue
        text = item["text"].replace("\r\n", "\n").strip()
        name = str(item.get("id") or number)
        if not text:
            skipped.append(Skipped(where, "empty text"))
        elif len(text.encode()) > max_bytes:
            skipped.append(Skipped(where, f"{len(text.encode()):,} bytes, over --max-passage-bytes"))
        else:
            passages.append(Passage(session_id(name, text), f"{path}#{name}", text, title_of(text, name)))
    return passages, skipped


def collect(paths: list[Path], max_bytes: int) -> tuple[list[Passage], list[Skipped]]:
    """Every passage under `paths`, in the order given (a folder's in path order); what
    was left out, and why. A path that does not exist is the user's error, at once."""
    found: list[Passage] = []
    skipped: list[Skipped] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"{path} does not exist", "give files, folders or a JSONL file of passages")
        if path.is_file() and path.suffix.lower() == ".jsonl":
            more, left = _jsonl(path, max_bytes)
            found += more
            skipped += left
            continue
        files = _files(path)
        if path.is_dir() and not files:
            skipped.append(Skipped(str(path), "no *.txt or *.md file in it"))
        for file, name in files:
            try:
                text = read_passage(file, max_bytes)
            except UserError as exc:
                skipped.append(Skipped(str(file), exc.problem))
                continue
            found.append(Passage(session_id(name, text), str(file), text, title_of(text, name)))
    passages: list[Passage] = []
    ids: dict[str, Passage] = {}
    texts: dict[str, Passage] = {}
    for p in found:
        if p.id in ids:
            skipped.append(Skipped(p.source, f"its id {p.id!r} is taken by {ids[p.id].source}"))
        elif p.sha256 in texts:
            skipped.append(Skipped(p.source, f"the same text as {texts[p.sha256].source}"))
        else:
            ids[p.id] = texts[p.sha256] = p
            passages.append(p)
    return passages, skipped
