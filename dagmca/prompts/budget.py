"""Prompts fitted to the model's context window, in tokens.

A prompt is fixed text (the passage block, the question, the instructions) and quoted
material (turns, resolutions, other branches' outputs). Everything goes in whole when
it fits the budget: the context window less the call's output cap and a margin. When it
does not, quoted material gives way first, oldest first (the background a branch sees
before the debate's own material), a whole sentence at a time from the start of a
quote, and the cut is marked where it happened and counted in characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from dagmca.llm.base import Message
from dagmca.llm.tokens import TokenCounter
from dagmca.prompts.text import fence

# where a sentence or a line starts: after end punctuation and white space, or a newline
_SENTENCE_START = re.compile(r"(?<=[.!?…])[ \t]+(?=\S)|\n+")
JOINER = "\n\n"  # between the parts of a prompt's user message
SHORT_WORDS = 60  # about one paragraph: a cap worth fewer words asks for one


@dataclass(frozen=True)
class PromptBudget:
    """What one call may send, in tokens: the window less its output cap and a margin
    (for the chat framing and the counter's error on another model's tokenizer)."""

    counter: TokenCounter
    window: int
    turn: int  # output caps
    flag: int
    synthesis: int
    final: int

    @property
    def margin(self) -> int:
        return max(64, self.window // 20)

    def available(self, reserve: int) -> int:
        return max(0, self.window - reserve - self.margin)

    @staticmethod
    def words(cap: int) -> int:
        """About how many words of prose a cap of `cap` tokens holds, with room to spare."""
        return max(10, int(cap * 0.6))

    @staticmethod
    def prose(cap: int) -> str:
        """How long and in what shape to answer within a cap of `cap` tokens: a cap that
        holds less than a paragraph asks for one short paragraph, since an answer in
        paragraphs or a list cannot fit it and would be cut."""
        words = PromptBudget.words(cap)
        if words < SHORT_WORDS:
            return f"One short paragraph, at most {words} words."
        return f"Prose (paragraphs or a list where it helps), at most {words} words."


@dataclass(frozen=True)
class Quote:
    """Quoted material: whole when it fits."""

    label: str
    text: str


Part = str | Quote


@dataclass(frozen=True)
class Prompt:
    messages: list[Message]
    counted: int | Callable[[], int]  # the count, or how to make it when asked
    omitted_chars: int = 0  # of quoted material, cut to fit

    @cached_property
    def tokens(self) -> int:
        """As counted: a prompt that fits by a bound is tokenised only if asked."""
        return self.counted if isinstance(self.counted, int) else self.counted()


def sentence_starts(text: str) -> list[int]:
    """The offsets at which the sentences (and lines) of `text` start, after the first."""
    return [m.end() for m in _SENTENCE_START.finditer(text) if m.end() < len(text)]


def render_quote(q: Quote, dropped: int = 0) -> tuple[str, int]:
    """A quote with its first `dropped` sentences left out and marked; -1 leaves it all
    out. Returns the text and the characters omitted."""
    text = q.text.strip()
    if dropped < 0:
        return f"{q.label}: [left out to fit the context window: {len(text):,} characters]", len(text)
    if dropped == 0:
        return f"{q.label}:\n{fence('turn', text)}", 0
    start = sentence_starts(text)[dropped - 1]
    kept = text[start:]
    mark = f"[… {dropped} earlier sentence{'s' if dropped > 1 else ''} left out to fit the context window …]"
    return f"{q.label}:\n{fence('turn', f'{mark} {kept}')}", start


def fit(
    system: str, fixed_head: Sequence[Part], parts: Sequence[Part], budget: PromptBudget, reserve: int
) -> Prompt:
    """The messages for `system` and the user text made of `fixed_head` then `parts`,
    within `budget.available(reserve)` tokens. Quotes in `fixed_head` (a branch's
    background) give way before those in `parts`, each from its first sentence on."""
    items = [*fixed_head, *parts]
    quotes = [i for i, p in enumerate(items) if isinstance(p, Quote)]
    dropped = dict.fromkeys(quotes, 0)
    limit = budget.available(reserve)

    def build() -> tuple[list[str], int]:
        chunks, omitted = [], 0
        for i, p in enumerate(items):
            if isinstance(p, Quote):
                text, cut = render_quote(p, dropped[i])
                chunks.append(text)
                omitted += cut
            elif p:
                chunks.append(p)
        return chunks, omitted

    def tokens(chunks: list[str]) -> int:
        # counted part by part: the parts (the passage above all) recur from prompt to
        # prompt and their counts are cached, where the joined text is new every time
        return budget.counter.count_parts(system, chunks, JOINER)

    chunks, omitted = build()
    if budget.counter.bound_parts(system, chunks, JOINER) <= limit:
        # fits whole by a bound that tokenises none of the new text: the usual case on a
        # large window, where counting every prompt's new text was most of its cost
        return Prompt(_messages(system, chunks), counted=lambda: tokens(chunks), omitted_chars=omitted)
    count = tokens(chunks)
    for i in quotes:  # oldest first
        if count <= limit:
            break
        q = items[i]
        assert isinstance(q, Quote)
        starts = len(sentence_starts(q.text.strip()))
        # the fewest sentences to drop from this quote: binary search, then all of it
        lo, hi, best = 1, starts, None
        while lo <= hi:
            mid = (lo + hi) // 2
            dropped[i] = mid
            trial, _ = build()
            if tokens(trial) <= limit:
                best, hi = mid, mid - 1
            else:
                lo = mid + 1
        dropped[i] = best if best is not None else -1
        chunks, omitted = build()
        count = tokens(chunks)
    return Prompt(messages=_messages(system, chunks), counted=count, omitted_chars=omitted)


def _messages(system: str, chunks: list[str]) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": JOINER.join(chunks)}]
