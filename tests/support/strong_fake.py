"""A scripted stand-in for a strong model: answers of 200-300 words in paragraphs (every
third one with a bulleted list), flags with real questions, verdicts with reasons, the
ledger's claims and their sources, and the rest of an answer when asked to continue one
that its cap cut short. Deterministic: every choice is a hash of the prompt. It keeps
what it said, so tests can check that what was stored and quoted is exactly what it
wrote."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dagmca.llm.fake import (
    ANSWER_ASKED,
    PARTS_ASKED,
    STANCE_ASKED,
    ScriptedCall,
    checked_excerpt,
    default_structured,
)
from dagmca.prompts.schemas import (
    DuplicateVerdict,
    PairVerdict,
    StubVerdict,
    TensionFlag,
    joint_lenses,
    joint_turns,
)
from tests.support.judges import duplicate_questions, ledger_reply, sentences_of, stub_parts, verbatim

LONG_PASSAGE = (Path(__file__).parents[1] / "data" / "four_day_week.txt").read_text(encoding="utf-8")

SENTENCES = (
    "Hours at a desk measure presence, not the quantity of concentrated work a team produces.",
    "The British pilot enrolled self-selected firms, so its results cannot be generalised without care.",
    "Compression removes meetings and interruptions that a longer week allowed to accumulate unnoticed.",
    "In care, transport and teaching, output moves with hours, so a shorter week means hiring more staff.",
    "Self-reported wellbeing is a weak measure when participants know what the trial hopes to show.",
    "Unit labour costs stay flat only if output per hour rises enough to offset the lost day.",
    "Collective agreements spread earlier reductions in hours across whole sectors rather than single firms.",
    "A six-month trial captures novelty, not the slow return of old habits after a change of management.",
    "Exporting manufacturers may have little slack to remove, as their hours are already managed tightly.",
    "The distributional risk is that professionals gain a day while shift workers gain nothing at all.",
    "Public procurement lets the state absorb transition costs and learn before asking others to follow.",
    "Iceland cut hours by one to four per week, which is a different policy from removing a whole day.",
    "Fatigue is a cost that never appears on a timesheet, yet it shows up as errors and accidents.",
    "Randomised trials with control groups would separate the effect of shorter hours from selection.",
    "Second jobs could absorb the extra day and erase the gains in health that advocates expect.",
    "The argument that forty hours is natural ignores that it was itself a negotiated settlement.",
)
WORDS_PER_ANSWER = (200, 300)


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def answer(seed: str) -> str:
    """A strong model's answer: 2-4 paragraphs; every third one ends with a bulleted list."""
    h = _h(seed)
    target = WORDS_PER_ANSWER[0] + h % (WORDS_PER_ANSWER[1] - WORDS_PER_ANSWER[0])
    paragraphs: list[str] = []
    words = 0
    k = 0
    with_list = h % 3 == 0
    # like a strong model, it does not say the same sentence twice in one answer (the
    # degeneration guard would rightly take that for a loop)
    order = sorted(range(len(SENTENCES)), key=lambda i: _h(seed, str(i)))
    while words < target and k < len(order):
        size = 3 + (h >> (k % 32)) % 3
        chosen = [SENTENCES[i] for i in order[k : k + size]]
        paragraphs.append(" ".join(chosen))
        words += sum(len(s.split()) for s in chosen)
        k += size
    if with_list:
        items = [SENTENCES[(h + j * 3) % len(SENTENCES)].rstrip(".") for j in range(3)]
        paragraphs.append("The points that matter most:\n" + "\n".join(f"- {item};" for item in items))
    return "\n\n".join(paragraphs)


def _seed(call: ScriptedCall) -> str:
    return f"{call.meta.agent}|{call.meta.phase}|{call.prompt}"


def _named(call: ScriptedCall) -> list[str]:
    """The agents the prompt quotes (its labelled blocks), other than the one asked."""
    found = re.findall(r"\b(L\d+N\d+) \(", call.prompt)
    return [a for a in dict.fromkeys(found) if a != call.meta.agent] or ["L1N1", "L1N2"]


def _lower(sentence: str) -> str:
    """A sentence continuing a line (so no text ends with a whole sentence of another)."""
    return sentence[0].lower() + sentence[1:]


def _listed_disagreements(prompt: str) -> list[str]:
    """The disagreement lines of the integrated answer a strange-loop prompt quotes."""
    found = re.search(r"Your integrated answer:\n<turn>\n(.*?)\n</turn>", prompt, re.S)
    section = re.search(r"Disagreements:\n(.*?)(?:\n\n|\Z)", found.group(1), re.S) if found else None
    return [line for line in section.group(1).splitlines() if line.startswith("- ")] if section else []


def shaped(call: ScriptedCall, text: str) -> str:
    """A strong model's answer in the form its prompt asks: the root's in labelled
    parts, a lateral turn ending with its stance, a question session's with its answer."""
    h = _h(_seed(call), "shape")
    if PARTS_ASKED in call.prompt:
        a, b = (_named(call) * 2)[:2]
        paragraphs = text.split("\n\n")
        s1, s2, s3 = (SENTENCES[(h >> k) % len(SENTENCES)] for k in (0, 8, 16))
        # as told, the strange loop keeps every disagreement its integrated answer lists
        kept = _listed_disagreements(call.prompt) if call.meta.phase == "strange_loop" else []
        dissent = kept or [f"- {a} vs {b}: {a} holds that {_lower(s1)} {b} doubts it."]
        return (
            f"Position: {paragraphs[0]}\n\n"
            "Disagreements:\n" + "\n".join(dissent) + "\n\n"
            f"Agreements:\n- {a} and {b} agree that {_lower(s2)}\n\n"
            f"Inferences:\n- From {a} and {b}: {_lower(s3)}"
        )
    if STANCE_ASKED in call.prompt:
        word = ("kept", "revised", "changed")[h % 3]
        text += f"\n\nStance: {word} because {_lower(SENTENCES[h % len(SENTENCES)])}"
    if ANSWER_ASKED in call.prompt:
        text += f"\nAnswer: {('yes', 'no')[_h(call.meta.agent or '') % 2]}\nConfidence: 0.{6 + h % 4}"
    return text


CONTINUE = "Your reply was cut off at the length limit."


class StrongModel:
    """The responder (a callable for ScriptedLLM) and what it said."""

    answers_joint = True  # flags every lens of a joint observer call itself

    def __init__(self) -> None:
        self.said: list[str] = []  # every plain answer, whole
        self.flags: list[str] = []  # every flag question

    def __call__(self, call: ScriptedCall) -> str | BaseModel | dict[str, Any] | None:
        if call.schema is None:
            last = call.messages[-1]["content"]
            if last.startswith(CONTINUE):  # the rest of the answer its cap cut short
                original = ScriptedCall(call.messages[:-2], None, call.meta, call.max_tokens)
                full, partial = shaped(original, answer(_seed(original))), call.messages[-2]["content"]
                return full[len(partial) :].strip() if full.startswith(partial) else full
            text = shaped(call, answer(_seed(call)))
            self.said.append(text)
            return text
        seed = _seed(call)
        h = _h(seed)
        if issubclass(call.schema, TensionFlag):
            lens = call.meta.agent.removeprefix("observer:")
            quoted = checked_excerpt(call.prompt, int(default_structured(call.schema, seed).get("turn", 1)))
            return {**default_structured(call.schema, seed), **self.flag(lens + quoted, quoted)}
        if "flags" in call.schema.model_fields:  # every lens in one call: a flag each (per turn)
            lenses, turns = joint_lenses(call.schema), joint_turns(call.schema)
            if not turns:
                quoted = checked_excerpt(call.prompt)
                return {"flags": [{"lens": lens, **self.flag(lens + quoted, quoted)} for lens in lenses]}
            return {
                "flags": [
                    {
                        "lens": lens,
                        "turn": n,
                        **self.flag(lens + checked_excerpt(call.prompt, n), checked_excerpt(call.prompt, n)),
                    }
                    for n in range(1, turns + 1)
                    for lens in lenses
                ]
            }
        if call.schema is PairVerdict:
            verdict = ("elaborate", "contradict", "unrelated", "converge")[h % 4]
            return {"verdict": verdict, "shared_claim": SENTENCES[(h >> 4) % 16], "reason": SENTENCES[h % 16]}
        if call.schema is StubVerdict:
            verdict = ("open", "relevant", "answered")[h % 3]
            text = stub_parts(call.prompt)[1]
            sentence = text.split(". ")[0] if verdict == "answered" else ""
            return {"verdict": verdict, "answering_sentence": sentence, "reason": SENTENCES[h % 16]}
        if call.schema is DuplicateVerdict:
            # its questions are a claim, then what would test it: one question when the claim is
            a, b = (q.split(":")[0] for q in duplicate_questions(call.prompt))
            verdict = "duplicate" if a == b else "distinct"
            return {"verdict": verdict, "reason": f"{verdict}: {SENTENCES[h % 16]}"}
        # the ledger: the claims are the text's sentences; a text states one it has word for word
        traced = ledger_reply(call, sentences_of, verbatim)
        if traced is not None:
            return traced
        return default_structured(call.schema, seed)

    def flag(self, seed: str, excerpt: str) -> dict[str, Any]:
        """A flag on the turn `excerpt` quotes (a flag whose excerpt is not in its turn is
        discarded), seeded by the lens and the turn: the model's view of a turn, whether
        it is asked lens by lens, turn by turn or a group of turns at once."""
        h = _h(seed)
        question = (
            f"{SENTENCES[h % len(SENTENCES)].rstrip('.')}: what would show whether this holds "
            f"across sectors {h % 97}?"
        )
        self.flags.append(question)
        return {
            "question": question,
            "urgency": round(0.4 + (h % 56) / 100, 2),
            "category": ("gap", "assumption", "contradiction", "open_question")[h % 4],
            "excerpt": excerpt,
            "rationale": "The debate asserts this without evidence that would tell it from selection.",
        }


def turn_text(prompt: str, n: int) -> str:
    """The text of turn `n` in an observer prompt on a group of sibling turns."""
    found = re.search(rf"Turn to check {n} \(.*?\)\W*\n(.*?)(?:</turn>|\Z)", prompt, re.S)
    return found.group(1) if found else str(n)


def words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]+", text))
