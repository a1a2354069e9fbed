"""What a GGUF model file says about itself: its name, size and trained context window,
read from the header's metadata by `gguf`, llama.cpp's own reader of the format.

`gguf` reads every field of the header (a token table holds tens of thousands of
items), which takes seconds of CPU, so the few values dagmca uses are kept in the user's
cache, keyed by the file's path, size and modification time: a model is read once."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagmca.errors import UserError

_WANTED = ("general.name", "general.architecture", "general.size_label", "tokenizer.chat_template")


@dataclass(frozen=True)
class GGUFInfo:
    path: Path
    name: str
    architecture: str
    context_length: int | None  # the trained context window
    size_label: str  # "135M", "8B" where the file says
    has_chat_template: bool
    file_bytes: int

    def describe(self) -> str:
        size = (
            f"{self.file_bytes / 2**20:,.0f} MiB"
            if self.file_bytes < 2**30
            else f"{self.file_bytes / 2**30:.1f} GiB"
        )
        label = f", {self.size_label} parameters" if self.size_label else ""
        window = f", trained context {self.context_length:,}" if self.context_length else ""
        return f"{self.name} ({self.path.name}, {size}{label}{window})"


def cache_dir() -> Path:
    """Where the headers read are kept (XDG_CACHE_HOME, else ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dagmca" / "gguf"


def _cache_file(path: Path) -> Path:
    stat = path.stat()
    key = f"{path.resolve()}\n{stat.st_size}\n{stat.st_mtime_ns}"
    return cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def _header(path: Path) -> dict[str, Any]:
    """The metadata dagmca uses, as `gguf` reads it (the tensors are never read)."""
    from gguf import GGUFReader  # imported by the runs that read a model only

    reader = GGUFReader(path)
    arch_field = reader.get_field("general.architecture")
    arch = str(arch_field.contents()) if arch_field is not None else ""
    meta: dict[str, Any] = {}
    for key in (*_WANTED, f"{arch}.context_length"):
        field = reader.get_field(key)
        if field is not None:
            meta[key] = field.contents()
    return meta


def _cached_header(path: Path) -> dict[str, Any]:
    cached = _cache_file(path)  # OSError: no such file
    try:
        meta = json.loads(cached.read_text(encoding="utf-8"))
        if isinstance(meta, dict):
            return meta
    except (OSError, ValueError):
        pass  # not read yet, or a cache that cannot be read: the file itself is
    meta = _header(path)
    kept = {k: v for k, v in meta.items() if k != "tokenizer.chat_template"} | {
        "tokenizer.chat_template": bool(meta.get("tokenizer.chat_template"))
    }
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(kept), encoding="utf-8")
    except OSError:
        pass  # a read-only home: read again next time
    return kept


def read_gguf(path: Path) -> GGUFInfo:
    """The model's metadata; a file that is not a GGUF model is one clear error."""
    try:
        meta = _cached_header(path)
    except OSError as exc:
        raise UserError(f"cannot read the model file {path}: {exc.strerror}", "check --local-model") from None
    except (ValueError, IndexError, TypeError) as exc:  # what `gguf` raises on a file it cannot read
        raise UserError(f"{path} is not a usable GGUF model file: {exc}", "check --local-model") from None
    arch = str(meta.get("general.architecture", ""))
    context = meta.get(f"{arch}.context_length")
    return GGUFInfo(
        path=path,
        name=str(meta.get("general.name") or path.stem),
        architecture=arch,
        context_length=int(context) if isinstance(context, int) and context > 0 else None,
        size_label=str(meta.get("general.size_label", "")),
        has_chat_template=bool(meta.get("tokenizer.chat_template")),
        file_bytes=path.stat().st_size,
    )
