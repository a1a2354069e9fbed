"""What a call costs: the price flags, else a table of well-known models' list prices.
A cost budget (--max-cost-usd) needs one or the other; without a price it would never
be reached, so that is an error, not a silent no-op."""

from __future__ import annotations

from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.llm.base import Usage
from dagmca.llm.local import LOCAL_MODEL_NAME

# USD per 1,000 tokens (prompt, completion): the providers' published list prices for
# standard (not batch, not cached) use, as of 2026. Matched on the longest prefix of
# the model name without a router's "provider/" prefix; the price flags override them.
KNOWN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.00015, 0.0006),
    "gpt-4o": (0.0025, 0.01),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1": (0.002, 0.008),
    "gpt-5-nano": (0.00005, 0.0004),
    "gpt-5-mini": (0.00025, 0.002),
    "gpt-5": (0.00125, 0.01),
    "o3-mini": (0.0011, 0.0044),
    "o4-mini": (0.0011, 0.0044),
    "o3": (0.002, 0.008),
    "claude-3-5-haiku": (0.0008, 0.004),
    "claude-3-5-sonnet": (0.003, 0.015),
    "claude-3-7-sonnet": (0.003, 0.015),
    "claude-sonnet-4": (0.003, 0.015),
    "claude-opus-4": (0.015, 0.075),
    "gemini-2.5-flash": (0.0003, 0.0025),
    "gemini-2.5-pro": (0.00125, 0.01),
    LOCAL_MODEL_NAME: (0.0, 0.0),  # the embedded model runs here
}


@dataclass(frozen=True)
class Prices:
    per_1k_prompt: float = 0.0
    per_1k_completion: float = 0.0
    source: str = "none"  # the price flags, the table (and which entry), or none

    def cost(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.per_1k_prompt + usage.completion_tokens * self.per_1k_completion
        ) / 1000


def known_price(model: str) -> tuple[str, tuple[float, float]] | None:
    name = model.lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in KNOWN_PRICES if name.startswith(prefix.lower())]
    if not matches:
        return None
    best = max(matches, key=len)
    return best, KNOWN_PRICES[best]


def resolve_prices(cfg: SessionConfig, model: str) -> Prices:
    """The session's prices; an error when a cost budget is set and nothing prices it."""
    known = known_price(model)
    prompt, completion = cfg.price_per_1k_prompt, cfg.price_per_1k_completion
    if prompt is not None or completion is not None:
        table = known[1] if known else (0.0, 0.0)
        return Prices(
            prompt if prompt is not None else table[0],
            completion if completion is not None else table[1],
            "the price flags",
        )
    if cfg.llm == "fake":
        known = ("scripted", (0.0, 0.0))
    if known is None:
        if cfg.max_cost_usd is not None:
            raise UserError(
                f"--max-cost-usd needs a price, and model {model!r} has none in dagmca's table",
                "pass --price-per-1k-prompt and --price-per-1k-completion",
            )
        return Prices()
    entry, (p, c) = known
    if cfg.max_cost_usd is not None and p == 0 and c == 0:
        raise UserError(
            f"--max-cost-usd: model {model!r} costs nothing here, so a cost budget would never be reached",
            "use --max-llm-calls or --max-tokens, or pass the price flags",
        )
    return Prices(p, c, f"table of known prices ({entry})")
