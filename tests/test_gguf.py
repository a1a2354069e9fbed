"""Any GGUF the user has: its header read for name, size and trained context; the slot
context sized from it; a file that is not a model refused in one line; and the
sampling setting parsed and checked."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from dagmca.config import SessionConfig, parse_sampling
from dagmca.errors import UserError
from dagmca.llm.gguf import read_gguf
from dagmca.llm.local import SLOT_CONTEXT, USER_SLOT_CAP, find_gguf, served_name, slot_context


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, meta: dict[str, str | int | list[str]]) -> Path:
    """A GGUF v3 header with `meta` (strings, uint32s, string arrays) and no tensors."""
    body = b""
    for key, value in meta.items():
        body += _string(key)
        if isinstance(value, str):
            body += struct.pack("<I", 8) + _string(value)
        elif isinstance(value, int):
            body += struct.pack("<I", 4) + struct.pack("<I", value)
        else:
            body += struct.pack("<I", 9) + struct.pack("<IQ", 8, len(value)) + b"".join(map(_string, value))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(meta)) + body)
    return path


def test_the_bundled_model_reads_as_what_it_is() -> None:
    info = read_gguf(find_gguf())
    assert info.architecture == "llama" and info.size_label == "135M"
    assert info.context_length == 8192 and info.has_chat_template
    assert "135M parameters" in info.describe() and "MiB" in info.describe()


def test_another_architecture_is_read_past_its_token_table(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "qwen.gguf",
        {
            "general.architecture": "qwen2",
            "tokenizer.ggml.tokens": [f"tok{i}" for i in range(5000)],
            "general.name": "Qwen2.5 1.5B Instruct",
            "qwen2.context_length": 32768,
            "tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}",
        },
    )
    info = read_gguf(path)
    assert (info.name, info.architecture, info.context_length) == ("Qwen2.5 1.5B Instruct", "qwen2", 32768)
    assert info.has_chat_template
    # a user's model: its trained context up to the cap; --context-window within what it was trained on
    assert slot_context(str(path), info.context_length, None) == USER_SLOT_CAP
    assert slot_context(str(path), info.context_length, 16384) == 16384
    assert slot_context(str(path), 2048, 16384) == 2048
    assert slot_context(None, 8192, None) == SLOT_CONTEXT
    assert served_name(str(path)) == "qwen"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not a model at all", "GGUF magic"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 5), "ends inside its header"),
    ],
)
def test_a_file_that_is_not_a_model_is_one_clear_error(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(UserError, match=says):
        read_gguf(path)


def test_sampling_is_parsed_and_checked() -> None:
    assert parse_sampling("repeat_penalty=1.1, dry_multiplier=0.8") == {
        "repeat_penalty": 1.1,
        "dry_multiplier": 0.8,
    }
    assert parse_sampling("none") == {}
    assert SessionConfig().sampling_params() is None  # the backend's default
    with pytest.raises(ValueError, match="not KEY=NUMBER"):
        SessionConfig(sampling="temperature=2")
    with pytest.raises(ValueError, match="not a number"):
        SessionConfig(sampling="repeat_penalty=high")
