"""The labelled lines a debate's turns end with, and the root's output in parts: what
the prompts ask for, how the engine reads it back, and how a resolution is written
from its parts.

Plain labelled text rather than a JSON schema: a strong model follows it, a weak one
that does not loses nothing (its whole text becomes the position), and every reader
that takes a resolution as text gets the parts without change.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dagmca.scoring import same_answer
from dagmca.text import answer_key, clip

Stance = Literal["kept", "revised", "changed"]
STANCES: tuple[Stance, ...] = ("kept", "revised", "changed")

STANCE_LINE = (
    "End with one line: 'Stance: kept', 'Stance: revised' or 'Stance: changed', then "
    "'because' and the argument or passage sentence that moved you (or why nothing did)."
)
ANSWER_LINES = (
    "End with two lines: 'Answer:' and your answer to the question in a few words, then "
    "'Confidence:' and a number from 0 to 1."
)

# A reply capped below this (the local backend's turns) has no room for four labelled
# parts or a stance line beside its content: it is asked for neither, and its whole
# text is the position, as a reply that ignores the format is.
FORMAT_MIN_TOKENS = 200

# the root's output: a label per part, in the order a resolution is written. The
# disagreements come right after the position, so a reader that clips a long resolution
# to fit its prompt still has the dissent.
POSITION, DISAGREEMENTS, AGREEMENTS, INFERENCES = "Position", "Disagreements", "Agreements", "Inferences"
LABELS = (POSITION, DISAGREEMENTS, AGREEMENTS, INFERENCES)
PARTS_FORMAT = (
    "Write it in four labelled parts, each label on a line of its own:\n"
    "Position: your answer to the question, with its reasons.\n"
    "Disagreements: one line each, '- ' first, naming the agents who disagree (as L1N2 vs "
    "L1N3) and both sides; leave them unresolved, do not settle them for the agents.\n"
    "Agreements: one line each, '- ' first, what the agents agree on, naming them.\n"
    "Inferences: one line each, '- ' first, what follows from combining points, naming the "
    "agents or the passage sentences it combines.\n"
    "Write 'none' under a part that has nothing."
)

_MARKUP = "*_#`> \t"
# a label opens its line and takes a colon ("Position: ..."), or stands alone as a
# heading ("## Disagreements"); singular or plural. A prose line that only starts with
# the word ("Position A (L1N2) holds ...") is not a label
_LABEL = re.compile(
    r"^[\s*_#>`]*(position|disagreements?|agreements?|inferences?)[\s*_`]*(?:\([^)\n]*\))?[\s*_`]*"
    r"(?::[\s*_`]*(.*)|$)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_STANCE = re.compile(
    r"^[\s*_>`]*stance[\s*_`]*:[\s*_`]*(kept|revised|changed)\b[\s*_`,.;:\u2014\u2013-]*"
    r"(?:because\b[\s:,]*)?(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER = re.compile(r"^[\s*_>`]*(?:final\s+)?answer[\s*_`]*:[\s*_`]*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_CONFIDENCE = re.compile(r"^[\s*_>`]*confidence[\s*_`]*:[\s*_`]*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(%|/\s*\d+(?:\.\d+)?)?")
_WORDS = {"very high": 0.9, "high": 0.8, "medium": 0.5, "moderate": 0.5, "low": 0.2, "very low": 0.1}
_NONE = {"none", "nothing", "n/a", "-", "none.", "no disagreements", "no agreements", "no inferences"}
_UNCHANGED = re.compile(r"^[\s*_`\"']*unchanged\b", re.IGNORECASE)
# a turn's closing lines (its stance, answer and confidence): not its reasons
_META = re.compile(r"^[\s*_>`]*(?:stance|(?:final\s+)?answer|confidence)[\s*_`]*:", re.IGNORECASE)
UNCHANGED_WORDS = 40  # a reply that starts "unchanged" and goes on is an answer, not the word


# -- stance and answer lines -----------------------------------------------------------
def stance(text: str) -> tuple[Stance | None, str | None]:
    """A lateral turn's stance line (its last one) and what follows 'because'."""
    found = list(_STANCE.finditer(text))
    if not found:
        return None, None
    last = found[-1]
    word = last.group(1).lower()
    because = last.group(2).strip(_MARKUP + ".") or None
    return next(s for s in STANCES if s == word), because


def answer(text: str) -> str | None:
    """A turn's answer line (its last one), its markup and closing stop dropped."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    value = found[-1].strip(_MARKUP).rstrip(".").strip(_MARKUP)
    return value or None


def confidence(text: str) -> float | None:
    """A turn's confidence line as a number from 0 to 1 (a percentage, or a word such as
    'high', read as one); None when there is none."""
    found = _CONFIDENCE.findall(text)
    if not found:
        return None
    value = found[-1].strip(_MARKUP).lower()
    number = _NUMBER.search(value)
    if number is not None:
        x, scale = float(number.group(1)), (number.group(2) or "").replace(" ", "")
        if scale.startswith("/") and float(scale[1:]) > 0:
            x /= float(scale[1:])  # 7/10
        elif scale == "%" or x > 10:
            x /= 100
        elif x > 1:  # a 0-10 scale: "Confidence: 8"
            x /= 10
        return round(min(max(x, 0.0), 1.0), 3)
    for word, x in _WORDS.items():
        if value.startswith(word):
            return x
    return None


def _group(answer: str, first: dict[str, str]) -> str:
    """The key `answer` is counted under: that of the first answer the scorer reads as
    the same one (an evaluation's exact rule: "B) Paris" is not "B", "The answer is 42"
    is "42"), else its own answer_key; `first` maps each key to its first answer."""
    key = next((k for k, given in first.items() if same_answer(given, answer)), answer_key(answer))
    first.setdefault(key, answer)
    return key


def tally(answers: Iterable[str | None]) -> dict[str, int]:
    """How many gave each answer, answers the scorer reads as one counted together;
    most given first."""
    first: dict[str, str] = {}
    counts = Counter(_group(a, first) for a in answers if a)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


REASON_CHARS = 300  # a holder's reason, as the root reads it beside the answer


def positions(held: Sequence[tuple[str, str | None, str]]) -> str:
    """The specialists' answers as positions, each with who holds it and their reasons,
    from (agent, answer, reason): what the root weighs, never a count to side with. In
    the order first given; an agent with no answer is left out."""
    by: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for agent, answer, reason in held:
        if not answer:
            continue
        key = _group(answer, first)
        said = f"{agent}: {clip(reason, REASON_CHARS)}" if reason.strip() else f"{agent}: (no reason given)"
        by.setdefault(key, []).append(said)
    return "\n".join(f"- {first[k]}, held by " + "; ".join(v) for k, v in by.items())


def reason_of(text: str, because: str | None) -> str:
    """Why a turn holds its answer: its stance line's reason when it gave one, else its
    first sentence (a specialist leads with its main point)."""
    if because:
        return because
    body = [line for line in text.splitlines() if line.strip() and not _META.match(line)]
    found = re.split(r"(?<=[.!?])\s+", " ".join(" ".join(body).split()), maxsplit=1)
    return found[0] if found and found[0] else ""


# -- the root's output in parts ----------------------------------------------------------
@dataclass
class Parts:
    """The root's output: the position and three lists. `parsed`: the text followed the
    labelled format (else the whole text is the position); `restored`: disagreements
    the strange loop dropped and the engine put back; `unchanged`: the strange loop
    answered 'unchanged'."""

    position: str
    disagreements: list[str] = field(default_factory=list)
    agreements: list[str] = field(default_factory=list)
    inferences: list[str] = field(default_factory=list)
    parsed: bool = False
    restored: int = 0
    unchanged: bool = False

    def render(self, raw: str = "") -> str:
        """The resolution's text: the parts under their labels; the model's own text
        (`raw`) when it did not follow the format, so nothing is lost or reworded."""
        if not self.parsed and not self.restored:
            return raw or self.position
        lines = [f"{POSITION}: {self.position}".rstrip()]
        for label, items in (
            (DISAGREEMENTS, self.disagreements),
            (AGREEMENTS, self.agreements),
            (INFERENCES, self.inferences),
        ):
            lines.append("")
            lines.append(f"{label}:")
            lines += [f"- {item}" for item in items] or ["- none"]
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False, sort_keys=True)


def parse_parts(text: str) -> Parts:
    """The labelled parts of a root output. Text before the first label belongs to the
    position; a part without bullets is one item per non-empty line. A text with no
    Position label and no other part is read as a position alone (parsed False)."""
    sections: dict[str, list[str]] = {}
    lead: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        found = _LABEL.match(line)
        if found is not None:
            said = found.group(1).lower().rstrip("s")
            label = next(x for x in LABELS if x.lower().rstrip("s") == said)
            current = sections.setdefault(label, [])
            if (found.group(2) or "").strip():
                current.append(found.group(2))
            continue
        (lead if current is None else current).append(line)
    if not sections or (POSITION not in sections and len(sections) < 2):
        return Parts(position=text.strip())
    position = "\n".join([*lead, *sections.get(POSITION, [])]).strip()
    return Parts(
        position=position,
        disagreements=_items(sections.get(DISAGREEMENTS, [])),
        agreements=_items(sections.get(AGREEMENTS, [])),
        inferences=_items(sections.get(INFERENCES, [])),
        parsed=True,
    )


def _items(lines: Sequence[str]) -> list[str]:
    items: list[str] = []
    bulleted = any(_BULLET.match(line) for line in lines)
    for line in lines:
        if not line.strip():
            continue
        if bulleted and not _BULLET.match(line) and items:
            items[-1] = f"{items[-1]} {line.strip()}"  # a bullet's wrapped line
            continue
        item = _BULLET.sub("", line).strip().strip("*_` ")
        if item and item.casefold() not in _NONE:
            items.append(item)
    return items


def is_unchanged(text: str) -> bool:
    """The strange loop's answer that its integrated answer stands as it is: the word
    'unchanged' first, with at most a short reason after it."""
    return bool(_UNCHANGED.match(text.strip())) and len(text.split()) <= UNCHANGED_WORDS


def _key(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold()))


_AGENT = re.compile(r"\bl\d+n\d+\b")
# words that settle a disagreement rather than restate it
_SETTLED = {"resolved", "settled", "favour", "favor", "wins", "won", "correct", "right", "prevails"}


def same_point(a: str, b: str) -> bool:
    """`b` states the disagreement `a` states: it names the same agents, and either
    contains `a`'s words without settling it, or the two share most of their words (a
    reworded item still counts as kept). Agent names and "vs" alone are no match."""
    ka, kb = _key(a), _key(b)
    if not ka or not kb:
        return False
    if set(_AGENT.findall(a.casefold())) != set(_AGENT.findall(b.casefold())):
        return False
    if ka <= kb:
        return not (kb - ka) & _SETTLED
    return len(ka & kb) / len(ka | kb) >= 0.7


def restore(before: Parts, after: Parts) -> Parts:
    """`after` with every disagreement of `before` it dropped put back, and counted."""
    missing = [d for d in before.disagreements if not any(same_point(d, x) for x in after.disagreements)]
    if missing:
        after.disagreements = [*after.disagreements, *missing]
        after.restored += len(missing)
    return after


def load_parts(data: str | None) -> dict[str, Any] | None:
    """A stored `resolution_parts` as a dict (None: a session stored before parts)."""
    if not data:
        return None
    value = json.loads(data)
    return value if isinstance(value, dict) else None
