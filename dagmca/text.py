"""Shortening text: `clip` for text that stays prose (prompts, titles), `one_line` for a
caption or a log line (progress, exports, tables); `answer_key`, a short answer as it is
compared; `quotes` and `nearest_sentence`, an excerpt held against the text it names."""

from __future__ import annotations

import re


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


def answer_key(value: str) -> str:
    """A short answer as answers are tallied and compared: case, spacing and closing
    punctuation set aside."""
    return " ".join(value.casefold().split()).strip(" .;:!")


_ELLIPSIS = ("...", "…", "[…]", "[...]")


def quotes(excerpt: str, text: str) -> bool:
    """Whether `excerpt` is quoted from `text`: its words in the same order, ignoring
    case, white space and punctuation; an ellipsis may stand for words left out between
    its pieces. An empty excerpt quotes nothing."""
    for mark in _ELLIPSIS:
        excerpt = excerpt.replace(mark, "\0")
    pieces = [_words(p) for p in excerpt.split("\0")]
    pieces = [p for p in pieces if p]
    if not pieces:
        return False
    haystack = f" {_words(text)} "
    at = 0
    for piece in pieces:
        found = haystack.find(f" {piece} ", at)
        if found < 0:
            return False
        at = found + len(piece) + 1
    return True


def _words(text: str) -> str:
    """The text's words, lowercased, one space apart (what a quote is compared by)."""
    kept = "".join(c.lower() if c.isalnum() else " " for c in text)
    return " ".join(kept.split())


def split_sentences(text: str) -> list[str]:
    """A prose text's sentences, cut after a full stop, question or exclamation mark."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def nearest_sentence(words: str, text: str) -> str | None:
    """The sentence of `text` that shares the most words with `words` (ties: the first),
    or None when no sentence shares one. Only picks a candidate: what a flag is about
    stays the observer's judgment."""
    wanted = _content(words)
    best, best_shared = None, 0
    for sentence in split_sentences(text):
        shared = len(wanted & _content(sentence))
        if shared > best_shared:
            best, best_shared = sentence, shared
    return best


def _content(text: str) -> set[str]:
    """The words that say what a text is about: longer than three letters, so that
    "the", "and" and "for" do not pick a sentence."""
    return {w for w in _words(text).split() if len(w) > 3}
