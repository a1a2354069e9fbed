"""Helpers that keep prompts bounded and keep passage text as data."""

from __future__ import annotations

import re

from dagmca.text import clip

_TAG = re.compile(r"</?\s*(passage|turn|context|transcript|text)\s*>", re.IGNORECASE)


def fence(tag: str, text: str, limit: int) -> str:
    """Wrap untrusted text in a tag it cannot close: the tags we use are removed
    from inside, so a passage cannot break a prompt's structure."""
    return f"<{tag}>\n{clip(_TAG.sub(' ', text), limit)}\n</{tag}>"


def bound(text: str, limit: int) -> str:
    """Hard cap for a whole prompt: keep the head and the tail (the instruction)."""
    if len(text) <= limit:
        return text
    tail = limit // 3
    return text[: limit - tail - 3] + "\n…\n" + text[-tail:]


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def tidy(text: str) -> str:
    """Drop sentences a model repeats within one answer (small models loop), and the
    structural tags it echoes from its prompt."""
    seen: set[str] = set()
    kept = []
    for sentence in _SENTENCE.split(_TAG.sub(" ", text).strip()):
        key = " ".join(sentence.lower().split())
        if not key or key in seen:
            continue
        seen.add(key)
        kept.append(sentence.strip())
    return " ".join(kept)
