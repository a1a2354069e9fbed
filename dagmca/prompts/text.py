"""Keeping passage text as data in prompts, and tidying what models write."""

from __future__ import annotations

import re

_TAG = re.compile(r"</?\s*(passage|turn|context|transcript|text)\s*>", re.IGNORECASE)


def fence(tag: str, text: str) -> str:
    """Wrap untrusted text in a tag it cannot close: the tags we use are removed
    from inside, so a passage cannot break a prompt's structure."""
    return f"<{tag}>\n{_TAG.sub(' ', text).strip()}\n</{tag}>"


def tidy(text: str) -> str:
    """What a model wrote, as it wrote it: paragraphs, lists and line breaks kept; only
    the structural tags it echoes from its prompt removed, and trailing white space."""
    lines = [line.rstrip() for line in _TAG.sub("", text).strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def drop_repeats(text: str) -> str:
    """The local 135M model loops: it says the same sentence again and again. Each
    sentence is kept once; lines (paragraphs, list items) keep their breaks."""
    seen: set[str] = set()
    lines = []
    for line in text.splitlines():
        kept = []
        for sentence in _SENTENCE.split(line):
            key = " ".join(sentence.lower().split())
            if key and key in seen:
                continue
            seen.add(key)
            kept.append(sentence)
        joined = " ".join(s for s in kept if s).rstrip()
        if joined or not line.strip():
            lines.append(joined)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
