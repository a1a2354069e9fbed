"""Shortening text: `clip` for text that stays prose (prompts, titles), `one_line` for a
caption or a log line (progress, exports, tables)."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary, marked when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut + "…"


def one_line(value: object, limit: int) -> str:
    """`value` as text on one line (runs of white space made one space), at most
    `limit` characters, marked when cut."""
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def local_id(node_id: str) -> str:
    """A node id without its session, as a caption shows it: main, main/b1, …"""
    return node_id.split("/", 1)[-1]
