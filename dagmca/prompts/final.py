"""The final integrator's prompt: the graph's sections, each under a label ([M] the main
debate, [B1] a branch, [S1] a synthesis, [C1] an unreconciled contradiction with both
positions, [Q1] an open question, [I1] a part integrated first), and a task that names
only the kinds of section present, asks for inline citations by label, no claim that
no section supports, and the writer's own inferences marked as such."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.prompts.budget import Part, Prompt, PromptBudget
from dagmca.prompts.templates import Frame, messages, quote

# what each label's letter stands for, in the order the prompt names them
KINDS = {
    "M": ("the main debate's resolution", "the main debate's resolution"),
    "B": ("a branch debate's resolution", "branch debates' resolutions"),
    "S": ("a synthesis of converging branches", "syntheses of converging branches"),
    "C": (
        "a contradiction left unreconciled, with both positions",
        "contradictions left unreconciled, each with both positions",
    ),
    "Q": ("a question left open", "questions left open"),
    "I": ("a part of the graph integrated first", "parts of the graph integrated first"),
}
# a citation as the final text writes it: one or more labels in brackets, [B1] or [B1, S2]
# (only the labels a final prompt gives: an editor's "[T]he" in a quote is no citation)
CITATION = re.compile(r"\[((?:M|[BSCQI]\d+)(?:\s*[,;]\s*(?:M|[BSCQI]\d+))*)\]")
MARK = "Inference:"  # how the writer marks a claim of its own, drawn from cited sections


@dataclass(frozen=True)
class Section:
    label: str  # M, B1, S1, C1, Q1, I1
    title: str  # what it is: "Branch (depth 1) on: ...", for the reader of the prompt
    text: str = ""
    # an unreconciled contradiction: each side's position whole, (who holds it, its text),
    # each quoted on its own, never the judge's verdict on them
    positions: tuple[tuple[str, str], ...] = ()


def contradiction(label: str, sides: Sequence[tuple[str, str, str]]) -> Section:
    """An unreconciled contradiction between debates, each side (its label, question,
    resolution) given whole."""
    title = "Unreconciled: " + " versus ".join(f"'{question}'" for _, question, _ in sides)
    held = tuple((f"[{side}], the debate on: {question}", text) for side, question, text in sides)
    return Section(label, title, positions=held)


def _quotes(section: Section) -> list[Part]:
    if not section.positions:
        return [quote(f"[{section.label}] {section.title}", section.text)]
    head = f"[{section.label}] {section.title}"
    return [quote(f"{head}; the position of {who}", text) for who, text in section.positions]


def contents(sections: Sequence[Section]) -> str:
    """What the prompt holds, naming only the kinds of section present, with their labels."""
    found: list[str] = []
    for letter, (one, many) in KINDS.items():
        labels = [s.label for s in sections if s.label[:1] == letter]
        if not labels:
            continue
        name = one if len(labels) == 1 else f"{len(labels)} {many}"
        found.append(f"{name} ({', '.join(f'[{label}]' for label in labels)})")
    return "; ".join(found) if found else "nothing"


def rules(sections: Sequence[Section]) -> str:
    """How to write the answer: cited inline, nothing unsupported, inferences marked;
    contradictions with both positions, where there are any."""
    example = " or ".join(f"[{s.label}]" for s in sections[:2])
    text = (
        f"Cite inline: after each claim, the label of every section above it rests on, in "
        f"brackets, as {example}; cite only those labels. Add no claim that no section "
        "supports. Where you draw a conclusion of your own that no section states, mark it: "
        f"begin its sentence with '{MARK}' and cite the sections it combines."
    )
    if any(s.label.startswith("C") for s in sections):
        text += (
            " Give every unreconciled contradiction with both of its positions, each "
            "attributed, without settling it unless a section does."
        )
    return text


def integrate(
    frame: Frame, sections: Sequence[Section], partial: bool = False, asked: bool = False
) -> Prompt:
    """The root integrator's prompt over `sections`. `partial`: one group of a graph too
    large for one prompt, integrated first. `asked`: the session answers a question the
    user asked, so the final text answers it first."""
    parts: list[Part] = [q for s in sections for q in _quotes(s)]
    words = PromptBudget.words(frame.budget.final)
    held, how = contents(sections), rules(sections)
    if partial:
        ask = (
            f"You are the root integrator, reading one part of a graph of debates too large to read "
            f"at once. Above: {held}. Integrate them into one account that keeps every distinct "
            "claim, contradiction (with both positions) and open question, so that nothing is lost when "
            f"it is integrated with the other parts. {how} Prose, at most {words} words."
        )
    elif asked:
        ask = (
            f"You are the root integrator. Above is what the debates on the question produced: {held}. "
            "Write the final answer to the question under debate: answer it directly in the first "
            "sentence, then give the reasons that hold up and what remains contested or open. "
            f"{how} Prose, in paragraphs, at most {words} words."
        )
    else:
        ask = (
            f"You are the root integrator. Above is what the debates on the passage produced: {held}. "
            "Write the final integrated answer to the passage: what it claims and what holds up, "
            f"and what remains contested or open. {how} Prose, in paragraphs, at most {words} words."
        )
    parts.append(ask)
    return messages(frame, parts, frame.budget.final)


@dataclass(frozen=True)
class Checked:
    text: str  # the final text with only the citations of sections it was given
    cited: list[str]  # the labels it cites, in order of first citing
    removed: list[str]  # labels it cited that name no section it was given, each once
    claims: int = 0  # the text's sentences that make a claim (claim_sentences)
    uncited: tuple[str, ...] = ()  # those that cite no section it was given


CLAIM_MIN_WORDS = 3  # a shorter piece ("In short.", "Yes.") states no claim to cite
_PIECE = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = re.compile(r"^[\s>#*\-\u2022]*(?:\d+[.)]\s+)?")


def claim_sentences(text: str) -> list[tuple[str, bool]]:
    """The text's sentences that make a claim, each with whether it cites a section: a
    citation placed after the full stop ("... holds. [M]") is the sentence's before it.
    Headings, labels ending in a colon and pieces under CLAIM_MIN_WORDS words are not
    claims."""
    found: list[list[str]] = []  # [sentence, its citations]
    for piece in _PIECE.split(text):
        piece = _LEAD.sub("", piece).strip()
        lead = re.match(r"^(?:" + CITATION.pattern + r"\s*)+", piece)
        if lead and found:  # a citation opening the piece belongs to the sentence before it
            found[-1][1] += lead.group(0)
            piece = piece[lead.end() :].strip()
        if piece:
            found.append([piece, ""])
    out = []
    for sentence, after in found:
        bare = CITATION.sub("", sentence).strip()
        if len(bare.split()) < CLAIM_MIN_WORDS or bare.endswith(":"):
            continue
        out.append((sentence, bool(CITATION.search(sentence + after))))
    return out


def check_citations(text: str, labels: Sequence[str]) -> Checked:
    """A citation stays only when it names a section of the prompt (as `ask` keeps only
    ids of its context); any other label is removed from the text and counted. The
    claims left citing nothing (none given, or only labels removed) are counted too."""
    known = set(labels)
    cited: dict[str, None] = {}
    removed: dict[str, None] = {}

    def keep(found: re.Match[str]) -> str:
        names = [n.strip() for n in re.split(r"[,;]", found.group(1)) if n.strip()]
        good = [n for n in names if n in known]
        for n in names:
            (cited if n in known else removed).setdefault(n, None)
        return f"[{', '.join(good)}]" if good else ""

    kept = CITATION.sub(keep, text)
    kept = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", kept)).strip()
    sentences = claim_sentences(kept)
    uncited = tuple(s for s, cites in sentences if not cites)
    return Checked(kept, list(cited), list(removed), len(sentences), uncited)
