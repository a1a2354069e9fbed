"""The small parts behind whole texts: strict schemas, JSON found in prose, tidying that
keeps structure, loop detection, and the budget's sentence-by-sentence cut."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import Field

from dagmca.graph import Strict
from dagmca.llm.base import Text
from dagmca.llm.degenerate import is_looping
from dagmca.llm.structured import find_json, strict_schema
from dagmca.llm.tokens import TokenCounter, _raw_count, is_reasoning_model, known_window
from dagmca.prompts.budget import JOINER, Part, PromptBudget, Quote, fit
from dagmca.prompts.text import drop_repeats, tidy


class Shape(Strict):
    format: Text(40)  # type: ignore[valid-type]  # a property named like a keyword
    count: int = Field(3, ge=1, le=9)


def test_strict_schemas_drop_keywords_not_properties_and_close_every_object() -> None:
    full: dict[str, Any] = Shape.model_json_schema()
    strict = strict_schema(full)
    assert set(strict["properties"]) == {"format", "count"}
    assert strict["required"] == ["format", "count"] and strict["additionalProperties"] is False
    text = str(strict)
    assert "maxLength" not in text and "minimum" not in text and "default" not in text
    assert "maxLength" in str(full), "the full schema keeps them: pydantic still enforces them"


def test_json_is_found_in_prose_and_fences() -> None:
    assert find_json('Sure! ```json\n{"a": {"b": 1}}\n``` Done.') == '{"a": {"b": 1}}'
    assert find_json("no json here") == "no json here"


def test_tidy_keeps_paragraphs_and_lists_and_only_the_local_cleanup_drops_repeats() -> None:
    text = "First paragraph. It goes on.\n\nThe list:\n- one;\n- two;\n\n\n\n<turn>End.</turn>  "
    assert tidy(text) == "First paragraph. It goes on.\n\nThe list:\n- one;\n- two;\n\nEnd."
    looped = "The answer is yes. The answer is yes. The answer is yes.\n- item\n- item two"
    assert drop_repeats(looped) == "The answer is yes.\n- item\n- item two"


def test_loops_are_found_and_refrains_of_two_are_not() -> None:
    assert is_looping("the answer is: the answer is: the answer is: the answer is")
    assert not is_looping("We shall fight on the beaches, we shall fight on the landing grounds.")


def test_known_models_and_reasoning_models() -> None:
    assert known_window("gpt-4o-mini") == 128_000 and known_window("openai/gpt-4.1") == 1_047_576
    assert known_window("my-own-model") is None
    assert is_reasoning_model("o3-mini") and not is_reasoning_model("gpt-4o")


def test_the_budget_leaves_out_whole_sentences_from_the_oldest_quote_first() -> None:
    counter = TokenCounter()
    old = " ".join(f"Old sentence number {i} says something." for i in range(40))
    new = " ".join(f"New sentence number {i} says something else." for i in range(10))
    budget = PromptBudget(counter, window=400, turn=100, flag=100, synthesis=100, final=100)
    prompt = fit("system", ["Passage."], [Quote("Old", old), Quote("New", new), "Answer."], budget, 100)
    text = prompt.messages[1]["content"]
    assert prompt.tokens <= budget.available(100) and prompt.omitted_chars > 0
    assert new in text, "the newer quote is whole"
    kept = text.split("left out to fit the context window …] ", 1)[1].split("\n</turn>")[0]
    assert old.endswith(kept) and kept.startswith("Old sentence number")
    assert prompt.omitted_chars == len(old) - len(kept)


def test_a_prompt_counted_part_by_part_counts_what_the_joined_text_counts() -> None:
    """The budget counts a prompt's parts one by one (cached: the passage recurs in every
    prompt). On real texts, with quotes, lists and code fences, that is the count of the
    joined message, never fewer: at most a token more per joint (a part ending in a line
    break merges with the joint), and when the counter is scaled, each count rounded up."""
    passages = sorted((Path(__file__).parent / "data").glob("*.txt"))
    assert len(passages) >= 2
    for counter in (TokenCounter(), TokenCounter(ratio=1.37)):
        budget = PromptBudget(counter, window=200_000, turn=500, flag=300, synthesis=500, final=800)
        for path in passages:
            text = path.read_text()
            paragraphs = [p for p in text.split("\n\n") if p.strip()]
            parts: list[Part] = [
                f"The passage:\n{text}",
                "Question: what does it claim?\n- first\n- second  ",
                Quote("Specialist L2N1, ethics", paragraphs[0]),
                Quote("Coordinator L1N1", " ".join(paragraphs[-2:])),
                '```json\n{"a": 1}\n```',
            ]
            prompt = fit("You are one of several agents.", [], parts, budget, 500)
            whole = counter.count_messages(prompt.messages)
            joints = len(parts) - 1
            slack = joints if counter.ratio == 1.0 else 3 * len(parts)
            assert whole <= prompt.tokens <= whole + slack, (path.name, counter.ratio)


def test_a_prompt_that_fits_by_the_bound_is_not_tokenised_until_its_count_is_asked() -> None:
    """On a large window a prompt fits by a bound (a token is at least a byte), so its
    new text is not tokenised to build it; its count, when asked, is the exact one. The
    bound is never below the count, on real texts, non-ASCII ones and a scaled counter."""
    text = sorted((Path(__file__).parent / "data").glob("*.txt"))[0].read_text()
    odd = "Ünïcödé — “quoted” 東京の夜行列車 🚆 İstanbul\n\n- a list\n```\ncode\n```"
    for counter in (TokenCounter(), TokenCounter(ratio=1.37), TokenCounter(ratio=0.6)):
        for parts in ([text, odd], [odd] * 3, [f"{odd} {i}" for i in range(5)], [""]):
            assert counter.bound_parts("system", parts, JOINER) >= counter.count_parts(
                "system", parts, JOINER
            )
    counter = TokenCounter()
    budget = PromptBudget(counter, window=200_000, turn=500, flag=300, synthesis=500, final=800)
    fresh = f"A turn never seen before: {time.time_ns()} {odd}"
    system = "You are one of several agents."
    counter.count(system)  # the system text is counted (and cached) once per debate
    before = _raw_count.cache_info().misses
    prompt = fit(system, [text], [Quote("Specialist", fresh), "Answer."], budget, 500)
    assert _raw_count.cache_info().misses == before, "nothing new was tokenised to build it"
    assert fresh in prompt.messages[1]["content"] and prompt.omitted_chars == 0
    whole = counter.count_messages(prompt.messages)
    assert whole <= prompt.tokens <= whole + 2
    # a window the bound does not clear: counted, and cut to fit as before
    small = PromptBudget(counter, window=900, turn=100, flag=100, synthesis=100, final=100)
    cut = fit("system", [], [Quote("Old", text), "Answer."], small, 100)
    assert cut.omitted_chars > 0 and cut.tokens <= small.available(100)
