"""The degeneration guard's measures: they fire on loops and echoes, and never on normal
prose — essays, lists whose items start alike, refrains, anaphora, quoted questions."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from dagmca.llm.degenerate import (
    MIN_LOOP_WORDS,
    _repeats,
    _tandem,
    degeneration,
    echo_reason,
    is_looping,
    loop_reason,
    scaffolding,
    words,
)
from dagmca.prompts.templates import MAIN_QUESTION, observer_scaffolding

ESSAY = (
    "Compatibilism holds that free will and determinism can both be true. The passage "
    "leans on this view without naming it: it says that an action is free when it flows "
    "from the agent's own reasons, not when it is uncaused. That move is familiar from "
    "Hume and, more recently, from Frankfurt, whose cases of the counterfactual "
    "intervener were meant to show that alternative possibilities are not required for "
    "moral responsibility.\n\n"
    "Yet the passage also claims that we could always have done otherwise. If that is "
    "meant in the categorical sense, it contradicts determinism outright; if it is meant "
    "conditionally (we would have done otherwise had we wanted to), it is compatible with "
    "determinism but no longer says what libertarians want it to say. The passage needs "
    "to choose, and the debate so far has not made it choose.\n\n"
    "A practical reading cuts through some of this. Courts do not ask whether a defendant "
    "was determined; they ask whether the act was intended, whether the agent understood "
    "it, and whether anyone coerced them. On that reading the metaphysical question is "
    "idle for the law, though not for the philosophy the passage wants to defend."
)

LIST = """The passage makes four claims:
- The author argues that prices change behaviour at the margin.
- The author argues that the charge should vary with the time of day.
- The author argues that the revenue must go back to transit.
- The author argues that exemptions undo most of the benefit.
Each of them can be tested against the London and Stockholm data."""

REFRAIN = """We shall go on to the end. We shall fight in France, we shall fight on the seas
and oceans, we shall fight with growing confidence and growing strength in the air, we
shall defend our island, whatever the cost may be. We shall fight on the beaches, we shall
fight on the landing grounds, we shall fight in the fields and in the streets, we shall
fight in the hills; we shall never surrender."""

SONG = """Verse one tells of the harbour where the boats come in at dawn.
Hold on, hold on, the tide is turning.
Verse two tells of the market and the prices that the fishers are paid.
Hold on, hold on, the tide is turning.
Verse three asks who owns the water and who decides what it is worth.
Hold on, hold on, the tide is turning.
The last verse answers none of it, and the song ends on the open question."""

NUMBERED = "\n".join(
    f"{i}. Step {i} of the argument: premise {i} supports the next one, because it names a "
    f"separate cause ({word}) that the passage treats as given."
    for i, word in enumerate(["price", "habit", "law", "density", "income", "weather"], start=1)
)

NORMAL = {"essay": ESSAY, "list": LIST, "refrain": REFRAIN, "song": SONG, "numbered": NUMBERED}

LOOPS = {
    "phrase": "The question under debate is: What is the tension in turns above? The answer is: "
    + "The answer is: " * 40,
    "sentence": "Free will is an illusion. " * 25,
    "pair": ("The passage argues that free will exists. It is important to consider the implications. " * 12),
    "tail": ESSAY + " " + "and the debate goes on and on " * 20,
    "numbered_loop": " ".join(f"The answer is {i}. The answer is the same." for i in range(40)),
}


@pytest.mark.parametrize("name", sorted(NORMAL))
def test_normal_prose_is_never_a_loop(name: str) -> None:
    assert loop_reason(NORMAL[name]) is None


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loops_are_caught(name: str) -> None:
    reason = loop_reason(LOOPS[name])
    assert reason is not None


def test_strict_measure_counts_what_a_reader_notices() -> None:
    # the report's measure: some 4-word sequence three times; anaphora trips it, which is
    # why the guard does not use it
    assert is_looping(LOOPS["phrase"]) and is_looping(REFRAIN)
    assert not is_looping(ESSAY)
    assert loop_reason(REFRAIN) is None


def test_short_emphasis_is_not_a_loop() -> None:
    assert loop_reason("No, no, no: the passage never says that.") is None


SCAFFOLD = observer_scaffolding(MAIN_QUESTION)


@pytest.mark.parametrize(
    "question",
    [
        "What is the tension in the turns above?",
        "What is the tension in turns above?",
        "What is the question under debate?",
        MAIN_QUESTION,
        "Find the one tension in the turns above that most deserves its own debate.",
    ],
)
def test_questions_that_restate_the_instructions_echo(question: str) -> None:
    assert echo_reason(question, SCAFFOLD) is not None


@pytest.mark.parametrize(
    "question",
    [
        "Does Frankfurt's counterexample undermine the principle of alternative possibilities?",
        "What does the passage assume about free will?",
        "Should congestion charges be refunded to low-income drivers?",
        "Is a conditional ability to do otherwise enough for moral responsibility?",
    ],
)
def test_real_questions_do_not_echo(question: str) -> None:
    assert echo_reason(question, SCAFFOLD) is None


def test_scaffolding_leaves_out_the_material() -> None:
    messages = [
        {"role": "system", "content": "You debate."},
        {
            "role": "user",
            "content": "<passage>\nCars congest streets.\n</passage>\n\nSay what the tension is.",
        },
    ]
    words = scaffolding(messages)
    assert "congest" not in words and "tension" in words
    # a reply that takes up the passage is its own, one that restates the task is not
    assert degeneration("Cars congest streets, so a charge could thin them out.", words) is None
    assert degeneration("Say what the tension is.", words) is not None


def test_the_quality_report_counts_loops_and_echoes() -> None:
    from dagmca.reports.quality import report, show

    nodes = [
        {"id": "s/main", "kind": "Debate", "question": MAIN_QUESTION},
        {"id": "t1", "kind": "Turn", "text": ESSAY},
        {"id": "t2", "kind": "Turn", "text": LOOPS["phrase"], "degenerate": True},
        {"id": "t3", "kind": "Turn", "text": LIST},
        {"id": "t4", "kind": "Turn", "text": SONG},
        {"id": "f", "kind": "Final", "text": ESSAY},
        {"id": "x1", "kind": "Tension", "debate": "s/main", "question": "What is the tension above?"},
        {"id": "x2", "kind": "Tension", "debate": "s/main", "question": "Is a charge fair to night workers?"},
    ]
    r = report(nodes)
    # the strict measure counts the song's refrain and the list's repeated openings too
    # (a reader notices them), which is why the guard does not use it
    assert (r["turns"]["count"], r["turns"]["looping"], r["turns"]["marked_degenerate"]) == (4, 3, 1)
    assert r["finals"] == {**r["finals"], "count": 1, "looping": 0}
    assert r["tensions"]["echoing"] == 1 and r["tensions"]["echoing_questions"][0]["id"] == "x1"
    assert "3 of   4 loop (75%)" in show(r)


def test_no_paragraph_of_the_shipped_examples_is_degenerate() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "examples").glob("*.txt"))]
    texts += [
        (root / "tests" / "data" / name).read_text(encoding="utf-8")
        for name in ("four_day_week.txt", "street_trees.txt")
    ]
    paragraphs = [p for t in texts for p in re.split(r"\n\s*\n", t) if len(p.split()) >= 20]
    assert len(paragraphs) >= 20
    assert [p[:60] for p in paragraphs if loop_reason(p)] == []
    assert all(loop_reason(t) is None for t in texts)


def test_ascii_words_are_the_word_pattern_lowercased() -> None:
    """`words` splits ASCII text by a byte table, not the regex: it must find the same
    words, whatever the punctuation, digits, underscores and case."""
    every_char = "".join(chr(c) for c in range(128))
    texts = [every_char * 2, "It's 3:15 -- the snake_case VAR, x+y=z; (done).\n\tNext\r\nline", "a" * 5, ""]
    for text in texts:
        assert words(text) == [w.lower() for w in re.findall(r"\w+", text)]
    assert words("İstanbul ÉTÉ straße") == ["i̇stanbul", "été", "straße"]  # not ASCII: word by word


def test_a_text_without_a_thrice_repeated_4_gram_has_no_run_to_find() -> None:
    """The loop guard skips the search for a unit said three times in a row when no
    4-word sequence occurs 3 times; that is only right if every such run long enough
    to count repeats a 4-gram 3 times. Checked on many texts from tiny vocabularies,
    where runs of every unit length are common."""
    rng = random.Random(7)
    found = 0
    for _ in range(3000):
        vocabulary = [f"w{i}" for i in range(rng.randint(1, 6))]
        ws = [rng.choice(vocabulary) for _ in range(rng.randint(12, 60))]
        if rng.random() < 0.5:  # plant a run: a unit of 1 to 8 words, three times or more
            unit = [rng.choice(vocabulary) for _ in range(rng.randint(1, 8))]
            at = rng.randint(0, len(ws))
            ws[at:at] = unit * rng.randint(3, 5)
        if _tandem(ws) >= MIN_LOOP_WORDS:
            found += 1
            assert _repeats(ws, 4) >= 3, ws
    assert found > 500  # the property was tested on many texts with a run


def test_scaffolding_cuts_what_the_plain_lazy_pattern_cuts() -> None:
    """The fenced material is found a run of text at a time, not a character at a time;
    it must be cut exactly where `<tag>.*?</tag>` (any case, across lines) cuts it:
    checked on many strings of tags, near-tags and text, and on a real prompt."""
    lazy = re.compile(r"<(passage|turn|context|transcript|text)>.*?</\1>", re.DOTALL | re.IGNORECASE)
    pieces = ["<", ">", "/", "turn", "TURN", "text", "a", "\n", " ", "</turn>", "<turn>", "<Text>",
              "</TEXT>", "<context>", "</context>", "x<", "İ", "é", "</passage>", "<passage>"]  # fmt: skip
    rng = random.Random(11)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert scaffolding([{"content": text}]) == lazy.sub(" ", text), text
    passage = (Path(__file__).parent / "data").glob("*.txt")
    prompt = "\n\n".join(f"<passage>\n{p.read_text()}\n</passage>\nSay <turn>x</Turn>." for p in passage)
    assert scaffolding([{"content": prompt}]) == lazy.sub(" ", prompt)
