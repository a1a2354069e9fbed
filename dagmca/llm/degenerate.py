"""Degenerate output, on every backend: a reply that loops (the same words again and
again, as a small model does when it runs to its cap, and a strong one now and then),
or one that only echoes its prompt's own instructions back.

Two measures of looping. `is_looping` is the strict one a reader would notice (some
4-word sequence 3 times or more): reports count it. `loop_reason` is the guard's: it
fires only on repetition that carries no content — a unit said three times in a row,
most sentences said before, or text that compresses to almost nothing — so normal
prose, lists that start their items alike and refrains are left alone."""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(256)
)  # for bytes.translate; only ever given ASCII, where letters, digits and _ are words
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# what `.*?</\1>` matches (up to the first closing tag), a run of text without "<" at a
# time instead of a character at a time: every prompt's passage is skipped this way
_FENCED = re.compile(r"<(passage|turn|context|transcript|text)>[^<]*(?:<(?!/\1>)[^<]*)*</\1>", re.IGNORECASE)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "must",
        "no",
        "not",
        "of",
        "on",
        "or",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "one",
        "ones",
        "more",
        "most",
        "any",
        "some",
    ]
)

MAX_UNIT = 60  # longest repeating unit looked for, in words
MIN_LOOP_WORDS = 12  # a repeat shorter than this is emphasis, not a loop


def words(text: str) -> list[str]:
    """Its words (runs of word characters), lowercased."""
    if text.isascii():  # the same words, a few times faster than the regex: every byte
        # that is not a word character becomes a space, every capital its small letter
        return text.encode().translate(_ASCII_WORDS).decode().split()
    # lowered word by word: lowering the whole text can change what counts as a word
    # character ("İ" becomes "i" and a combining dot)
    return [w.lower() for w in _WORD.findall(text)]


def is_looping(text: str, n: int = 4, times: int = 3) -> bool:
    """True when some `n`-word sequence occurs `times` times or more."""
    return _repeats(words(text), n) >= times


def _grams(ws: list[str], n: int) -> Iterator[tuple[str, ...]]:
    """Its `n`-word sequences (shifted copies zipped: the shorter ones end it)."""
    return zip(*(ws[i:] for i in range(n)), strict=False)


def _repeats(ws: list[str], n: int) -> int:
    """How often the commonest `n`-word sequence occurs (0 when there is none)."""
    return max(Counter(_grams(ws, n)).values(), default=0)


def _tandem(ws: list[str]) -> int:
    """Words covered by the longest run of one unit repeated 3 times or more in a row."""
    best = 0
    for unit in range(1, min(MAX_UNIT, len(ws) // 3) + 1):
        run = 0
        for i in range(len(ws) - unit):
            run = run + 1 if ws[i] == ws[i + unit] else 0
            if run >= 2 * unit:  # the unit, then two more copies of it
                best = max(best, run + unit)
    return best


def loop_reason(text: str) -> str | None:
    """Why `text` is a loop, or None when it is not."""
    ws = words(text)
    if len(ws) < MIN_LOOP_WORDS:
        return None
    # A run of one unit said three times covering MIN_LOOP_WORDS (12) words or more
    # repeats some 4-word sequence 3 times (a unit of u >= 4 words: its first 4 words,
    # at 0, u and 2u; a shorter unit: the run's first 4 words, u apart), so a text
    # without one has no such run, and the costly search is skipped for normal prose.
    covered = _tandem(ws) if _repeats(ws, 4) >= 3 else 0
    if covered >= max(MIN_LOOP_WORDS, 0.2 * len(ws)):
        return f"repeats itself in a row ({covered} of {len(ws)} words)"
    sentences = [" ".join(words(s)) for s in _SENTENCE.split(text)]
    sentences = [s for s in sentences if s]
    repeats = len(sentences) - len(set(sentences))
    if repeats >= 3 and repeats >= 0.4 * len(sentences):
        return f"says {repeats} of its {len(sentences)} sentences again"
    raw = text.encode()
    if len(raw) >= 600:
        ratio = len(zlib.compress(raw, 9)) / len(raw)
        if ratio < 0.2:
            return f"compresses to {ratio:.0%} of its length"
    return None


def scaffolding(messages: Sequence[Mapping[str, Any]]) -> str:
    """A prompt's own words: its messages without the material fenced in them (the
    passage, quoted turns)."""
    return "\n".join(_FENCED.sub(" ", str(m.get("content", ""))) for m in messages)


def _content(ws: list[str]) -> list[str]:
    return [w for w in ws if len(w) >= 3 and w not in _STOP]


def echo_reason(text: str, prompt_words: str, share_limit: float = 0.5) -> str | None:
    """Why `text` only restates its prompt's instructions (`prompt_words`, see
    `scaffolding`), or None. Echoing: `share_limit` of its 3-word sequences are the
    prompt's, or every content word it has is the prompt's and it has too few to say
    anything. A question is held to half (a tension must ask something new); a reply to
    most (an answer may restate its question before it answers)."""
    ws, own = words(text), words(prompt_words)
    if not ws:
        return "is empty"
    if len(ws) >= 3:
        theirs = set(_grams(own, 3))
        mine = list(_grams(ws, 3))
        share = sum(g in theirs for g in mine) / len(mine)
        if share >= share_limit:
            return f"{share:.0%} of it is the prompt's own wording"
    content = _content(ws)
    # content words pass the filter already: among the prompt's words is among its content words
    if content and len(content) <= 6 and set(content) <= set(own):
        return "it has no word of its own beyond the prompt's instructions"
    return None


REPLY_ECHO_SHARE = 0.8


def degeneration(text: str, prompt_words: str = "", share_limit: float = REPLY_ECHO_SHARE) -> str | None:
    """Why a text is degenerate (it loops, or echoes its prompt), or None."""
    return loop_reason(text) or (echo_reason(text, prompt_words, share_limit) if prompt_words else None)


# A re-ask's temperature (at least): enough to leave the loop greedy decoding fell into,
# low enough to stay on the prompt
REASK_TEMPERATURE = 0.7
MIN_REASON_WORDS = 3  # fewer say nothing a reader could check ("one sentence", "converge")
REASON_ECHO_SHARE = 0.5  # of a reason's 3-word sequences, a description's: it restates it
# a reason that opens by naming its own form ("one sentence from this paragraph", "two
# sentences describing the verdict") fills the field's placeholder, whatever follows
_PLACEHOLDER = re.compile(
    r"^(in )?(one|two|three|1|2|3)( or (two|three|2|3))?( short| brief)? (sentence|sentences|line|lines)"
    r"( (from|describing|that|about|explaining|stating|naming|on|why|of)\b|$)"
)


def field_descriptions(prompt: str, names: Sequence[str]) -> list[str]:
    """What a prompt says each of the fields `names` should hold: the clause after the
    field's name ("reason, one or two sentences that name what decides the verdict")."""
    found: list[str] = []
    for name in names:
        pattern = rf"\b{re.escape(name)}\b\s*[,:(]\s*([^;.\n]+)"
        found += [m.group(1) for m in re.finditer(pattern, prompt)]
    return found


def reason_degeneration(text: str, descriptions: Sequence[str] = ()) -> str | None:
    """Why a judged reason says nothing, or None: it is under three words, or it copies
    a description of its field (`descriptions`: the schema's, and the prompt's own, as
    `field_descriptions` finds them)."""
    ws = words(text)
    if len(ws) < MIN_REASON_WORDS:
        return f"under {MIN_REASON_WORDS} words" if ws else "empty"
    said = " ".join(ws)
    if _PLACEHOLDER.match(said):
        return "names its own form, not a reason"
    mine = list(_grams(ws, 3))
    for description in descriptions:
        theirs = words(description)
        if said in " ".join(theirs):
            return "copies the description of its field"
        share = sum(g in set(_grams(theirs, 3)) for g in mine) / len(mine)
        if share >= REASON_ECHO_SHARE:
            return f"{share:.0%} of it is the description of its field"
    return None
