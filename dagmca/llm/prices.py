"""What a call costs: the price flags, else the list prices `genai-prices` knows (kept
current by its maintainers, across providers and dates). A cost budget
(--max-cost-usd) needs one or the other; without a price it would never be reached, so
that is an error, not a silent no-op.

The prices are those of the snapshot the package ships: dagmca never starts its
updater, so pricing a call never touches the network."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.llm.base import Usage
from dagmca.llm.local import LOCAL_MODEL_NAME

# the models dagmca runs itself, which cost nothing (USD per 1,000 tokens: prompt, completion)
OWN_PRICES: dict[str, tuple[float, float]] = {LOCAL_MODEL_NAME.lower(): (0.0, 0.0)}
# the tokens priced to read a rate off: per 1,000, as the price flags are given
_PER = 1000


@dataclass(frozen=True)
class Prices:
    per_1k_prompt: float = 0.0
    per_1k_completion: float = 0.0
    source: str = "none"  # the price flags, the list prices (and which entry), or none

    def cost(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.per_1k_prompt + usage.completion_tokens * self.per_1k_completion
        ) / 1000


def known_price(model: str) -> tuple[str, tuple[float, float]] | None:
    """What was matched and the model's list prices (USD per 1,000 prompt and
    completion tokens), without a router's "provider/" prefix; None where no price is
    known."""
    name = model.lower().rsplit("/", 1)[-1]
    if name in OWN_PRICES:
        return name, OWN_PRICES[name]
    return _listed(name)


@cache
def _listed(name: str) -> tuple[str, tuple[float, float]] | None:
    import genai_prices  # its data is read on the first price asked for

    try:
        prompt = genai_prices.calc_price(genai_prices.Usage(input_tokens=_PER), name)
        completion = genai_prices.calc_price(genai_prices.Usage(output_tokens=_PER), name)
    except LookupError:
        return None
    entry = f"{prompt.provider.id} {prompt.model.id}, genai-prices {genai_prices.__version__}"
    return entry, (float(prompt.input_price), float(completion.output_price))


def resolve_prices(cfg: SessionConfig, model: str) -> Prices:
    """The session's prices; an error when a cost budget is set and nothing prices it."""
    prompt, completion = cfg.price_per_1k_prompt, cfg.price_per_1k_completion
    flags = prompt is not None or completion is not None
    # the scripted fake costs nothing, and is not looked up
    known = ("scripted", (0.0, 0.0)) if cfg.llm == "fake" and not flags else known_price(model)
    if flags:
        table = known[1] if known else (0.0, 0.0)
        return Prices(
            prompt if prompt is not None else table[0],
            completion if completion is not None else table[1],
            "the price flags",
        )
    if known is None:
        if cfg.max_cost_usd is not None:
            raise UserError(
                f"--max-cost-usd needs a price, and model {model!r} has none in genai-prices",
                "pass --price-per-1k-prompt and --price-per-1k-completion",
            )
        return Prices()
    entry, (p, c) = known
    if cfg.max_cost_usd is not None and p == 0 and c == 0:
        raise UserError(
            f"--max-cost-usd: model {model!r} costs nothing here, so a cost budget would never be reached",
            "use --max-llm-calls or --max-tokens, or pass the price flags",
        )
    return Prices(p, c, f"list prices ({entry})")
