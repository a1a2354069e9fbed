"""Scoring a short answer against a reference under a rule (`exact`, `numeric`,
`choice`): how an evaluation scores an arm's answer, how `metrics --reference` counts
flips, and how a debate's answers are told apart round to round, so that a flip in one
is a flip in the others. An answer that is missing or cannot be read under the rule is
wrong and marked a parse failure: dropping it would flatter the one that fails to
answer."""

from __future__ import annotations

import math
import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Literal

Rule = Literal["exact", "numeric", "choice"]
DEFAULT_TOLERANCE = 0.01  # relative: estimates are right within 1% unless told otherwise
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LETTER_ALONE = re.compile(r"^\(?([A-Za-z])\)?[.:]?$")
_LETTER_LEAD = re.compile(r"^\(?([A-Za-z])[).:]\s*(.+)$")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@dataclass(frozen=True)
class Score:
    """One answer's score: `correct` is None for judged tasks (no reference);
    `parsed` False when the answer could not be read; `log10_error` for numeric."""

    correct: bool | None
    parsed: bool = True
    log10_error: float | None = None
    numeric: bool = False  # scored under the numeric rule (its log10 error may be None)


def normalise(text: str) -> str:
    """Lower case, accents and punctuation dropped, articles dropped, spaces collapsed:
    how the answer is written should not decide whether it is right."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def parse_number(text: str) -> float | None:
    """The first number in `text` (thousands separators allowed), or None."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    try:
        return float(match.group().replace(",", ""))
    except ValueError:
        return None


def score_exact(answer: str, reference: str) -> Score:
    """Equal once normalised; a reference that is a number is matched as one, exactly
    ("The result is -155." is right for -155: normalising would drop its sign)."""
    if _NUMBER.fullmatch(reference.strip()):
        value = parse_number(answer)
        if value is None:
            return Score(False, parsed=False)
        return Score(value == parse_number(reference))
    return Score(normalise(answer) == normalise(reference))


def score_numeric(answer: str, reference: float, tolerance: float = DEFAULT_TOLERANCE) -> Score:
    """Right within `tolerance` of the reference, relative; with the log10 error (the
    order-of-magnitude miss, which is what an estimation question is judged on)."""
    value = parse_number(answer)
    if value is None:
        return Score(False, parsed=False)
    if reference == 0:
        correct = abs(value) <= tolerance
    else:
        correct = abs(value - reference) <= tolerance * abs(reference)
    log_error = (
        abs(math.log10(value / reference))
        if value != 0 and reference != 0 and value / reference > 0
        else None
    )
    return Score(correct, log10_error=log_error)


def pick_choice(answer: str, choices: list[str]) -> int | None:
    """Which choice the answer names: its letter alone ("B", "(b)", "C."), its letter
    before its text ("B) Paris"), or the text of exactly one choice. None when it names
    none, or more than one."""
    text = answer.strip()
    alone = _LETTER_ALONE.match(text)
    if alone is not None:
        index = ord(alone.group(1).upper()) - ord("A")
        return index if index < len(choices) else None
    lead = _LETTER_LEAD.match(text)
    if lead is not None:
        index = ord(lead.group(1).upper()) - ord("A")
        if index < len(choices) and normalise(lead.group(2)) == normalise(choices[index]):
            return index
    said = normalise(text)
    named = [i for i, c in enumerate(choices) if normalise(c) == said]
    if len(named) == 1:
        return named[0]
    contained = [i for i, c in enumerate(choices) if normalise(c) and normalise(c) in said]
    return contained[0] if len(contained) == 1 else None


def score_choice(answer: str, choices: list[str], reference: str) -> Score:
    """The reference is a choice's letter or its text."""
    picked = pick_choice(answer, choices)
    if picked is None:
        return Score(False, parsed=False)
    want = pick_choice(reference, choices)
    return Score(picked == want)


def score_answer(
    answer: str | None,
    reference: str,
    rule: Rule = "exact",
    choices: list[str] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Score:
    """`answer` against `reference` under `rule` (`choice` needs the `choices`). No
    answer: wrong, and a parse failure."""
    if answer is None or not answer.strip():
        return Score(False, parsed=False, numeric=rule == "numeric")
    if rule == "numeric":
        value = parse_number(reference)
        if value is None:
            raise ValueError(f"the numeric rule needs a number as the reference, not {reference!r}")
        found = score_numeric(answer, value, tolerance)
        return Score(found.correct, found.parsed, found.log10_error, numeric=True)
    if rule == "choice":
        if not choices:
            raise ValueError("the choice rule needs the choices")
        return score_choice(answer, choices, reference)
    return score_exact(answer, reference)


def same_answer(
    a: str,
    b: str,
    rule: Rule = "exact",
    choices: list[str] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> bool:
    """`a` and `b` are one answer under `rule`: either, taken as the reference, scores
    the other right (the exact rule reads a number in a sentence against a number, so
    "The answer is 42" and "42" are one answer either way round)."""
    for answer, reference in ((a, b), (b, a)):
        try:
            if score_answer(answer, reference, rule, choices, tolerance).correct:
                return True
        except ValueError:  # not a number, or no choice: not the same under this rule
            continue
    return False
