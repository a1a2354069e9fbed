"""Any GGUF the user has: its header read by `gguf` for name, size and trained context
(once a file: then from the cache); the slot context sized from it; a file that is not
a model refused in one line; and the sampling setting parsed and checked."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from dagmca.config import SessionConfig, parse_sampling
from dagmca.errors import UserError
from dagmca.llm.gguf import cache_dir, read_gguf
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


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.slow  # gguf reads the whole header
def test_the_bundled_models_name_and_context_are_read_by_gguf_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import gguf

    read: list[Path] = []
    reader = gguf.GGUFReader

    def reading(path: Path, *args: object) -> gguf.GGUFReader:
        read.append(Path(path))
        return reader(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(gguf, "GGUFReader", reading)
    path = find_gguf()
    info = read_gguf(path)
    assert read == [path]
    assert info.name == "Smollm2 135M 8k Lc100K Mix1 Ep2" and info.context_length == 8192
    assert info.architecture == "llama" and info.size_label == "135M" and info.has_chat_template
    assert "135M parameters" in info.describe() and "MiB" in info.describe()
    assert read_gguf(path) == info and read == [path]  # the second time, from the cache
    assert len(list(cache_dir().glob("*.json"))) == 1


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
        (b"not a model at all", "not a usable GGUF model file: GGUF magic invalid"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 5), "not a usable GGUF model file"),
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
