"""Prices come from `genai-prices` (the snapshot it ships, never fetched), the price flags
override them, and a model that has none is one line naming the flags to pass."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import genai_prices
import pytest

from dagmca.cli.app import main
from dagmca.config import SessionConfig
from dagmca.llm import prices
from dagmca.llm.prices import known_price, resolve_prices

ROOT = Path(__file__).resolve().parents[1]
# gpt-4o-mini's list prices (USD per 1,000 prompt and completion tokens), as dagmca's
# own table had them before the prices came from genai-prices
GPT_4O_MINI = (0.00015, 0.0006)


@pytest.fixture
def looked_up(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The models genai-prices was asked about; its updater, which fetches prices over
    the network, must never start."""
    asked: list[str] = []
    calc = genai_prices.calc_price

    def calc_price(usage: genai_prices.Usage, model_ref: str) -> object:
        asked.append(model_ref)
        return calc(usage, model_ref)

    def no_update(*args: object, **kwargs: object) -> None:
        raise AssertionError("genai-prices was asked to fetch prices")

    monkeypatch.setattr(genai_prices, "calc_price", calc_price)
    monkeypatch.setattr(genai_prices.UpdatePrices, "start", no_update)
    monkeypatch.setattr(genai_prices.UpdatePrices, "fetch", no_update)
    prices._listed.cache_clear()
    yield asked
    prices._listed.cache_clear()


def test_estimate_of_gpt_4o_mini_is_priced_by_genai_prices_as_before(
    looked_up: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    passage = str(ROOT / "examples" / "free_will.txt")
    code = main(["estimate", passage, "--llm", "openai", "--model", "gpt-4o-mini", "--json"])
    assert code == 0
    projected = json.loads(capsys.readouterr().out)
    assert "gpt-4o-mini" in looked_up
    for end in ("min", "max"):
        tokens = projected["prompt_tokens"][end], projected["completion_tokens"][end]
        cost = (tokens[0] * GPT_4O_MINI[0] + tokens[1] * GPT_4O_MINI[1]) / 1000
        assert projected["cost_usd"][end] == pytest.approx(cost, abs=0.00006)  # rounded to 4 places
    assert projected["cost_usd"]["max"] > 0
    entry, per_1k = known_price("gpt-4o-mini") or ("", (0.0, 0.0))
    assert per_1k == pytest.approx(GPT_4O_MINI) and "genai-prices" in entry


def test_the_flags_override_and_a_dated_or_routed_name_is_found(looked_up: list[str]) -> None:
    dated = resolve_prices(
        SessionConfig(llm="openai", model="gpt-4o-mini-2024-07-18"), "gpt-4o-mini-2024-07-18"
    )
    assert (dated.per_1k_prompt, dated.per_1k_completion) == pytest.approx(GPT_4O_MINI)
    assert "genai-prices" in dated.source
    routed = resolve_prices(SessionConfig(llm="openai", model="openai/gpt-4o-mini"), "openai/gpt-4o-mini")
    assert routed.per_1k_prompt == pytest.approx(GPT_4O_MINI[0])
    flags = SessionConfig(llm="openai", model="gpt-4o-mini", price_per_1k_completion=0.5)
    overridden = resolve_prices(flags, "gpt-4o-mini")
    assert (overridden.per_1k_prompt, overridden.per_1k_completion) == pytest.approx((GPT_4O_MINI[0], 0.5))
    assert overridden.source == "the price flags"
    local = resolve_prices(SessionConfig(), "SmolLM2-135M-Instruct")
    assert (local.per_1k_prompt, local.per_1k_completion) == (0.0, 0.0)
    assert "smollm2-135m-instruct" not in looked_up  # dagmca's own model is not looked up


def test_a_model_no_one_prices_is_one_line_naming_the_flags(
    looked_up: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    passage = str(ROOT / "examples" / "free_will.txt")
    code = main(["estimate", passage, "--llm", "openai", "--model", "my-own-model", "--max-cost-usd", "1"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert "my-own-model" in lines[0] and "--price-per-1k-prompt and --price-per-1k-completion" in lines[0]
    assert "my-own-model" in looked_up
