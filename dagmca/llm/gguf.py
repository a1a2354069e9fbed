"""What a GGUF model file says about itself: its name, size and trained context window,
read from the header's metadata (the tensors are never read)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from dagmca.errors import UserError

# GGUF value types and their fixed sizes (strings and arrays are read by length)
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
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


def _read(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize("<" + fmt)
    data = f.read(size)
    if len(data) < size:
        raise ValueError("the file ends inside its header")
    return struct.unpack("<" + fmt, data)[0]


def _string(f: BinaryIO) -> str:
    length = _read(f, "Q")
    if length > 1 << 26:
        raise ValueError("a header string is implausibly long")
    return f.read(length).decode("utf-8", errors="replace")


def _value(f: BinaryIO, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _read(f, _SCALARS[kind])
    if kind == _STRING:
        return _string(f) if keep else f.seek(_read(f, "Q"), 1)
    if kind == _ARRAY:
        inner, count = _read(f, "I"), _read(f, "Q")
        if inner in _SCALARS:  # skipped whole: token tables are arrays of 50k-150k items
            f.seek(struct.calcsize("<" + _SCALARS[inner]) * count, 1)
        else:
            for _ in range(count):
                _value(f, inner, keep=False)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def read_gguf(path: Path) -> GGUFInfo:
    """The model's metadata; a file that is not a GGUF model is one clear error."""
    try:
        with path.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise ValueError("it does not start with the GGUF magic")
            version = _read(f, "I")
            if version < 2:
                raise ValueError(f"GGUF version {version} is too old (2 or later is read)")
            _read(f, "Q")  # tensor count
            meta: dict[str, Any] = {}
            for _ in range(_read(f, "Q")):
                key = _string(f)
                kind = _read(f, "I")
                keep = key in _WANTED or key.endswith(".context_length")
                value = _value(f, kind, keep)
                if keep:
                    meta[key] = value
    except OSError as exc:
        raise UserError(f"cannot read the model file {path}: {exc.strerror}", "check --local-model") from None
    except (ValueError, struct.error) as exc:
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
