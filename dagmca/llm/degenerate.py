"""Degenerate output: a reply that loops (the same words again and again, as a small
model does when it runs to its cap). Applied to every backend's output."""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"\w+", re.UNICODE)


def is_looping(text: str, n: int = 4, times: int = 3) -> bool:
    """True when some `n`-word sequence occurs `times` times or more."""
    words = [w.lower() for w in _WORD.findall(text)]
    grams = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return bool(grams) and max(grams.values()) >= times
