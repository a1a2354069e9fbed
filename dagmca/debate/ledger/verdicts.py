"""The ledger's judge: one call per claim, one verdict per candidate text (states,
partial or unrelated) with the sentence that supports it and a reason; the passage is
a candidate like the turns, when the prefilter picks it. A verdict whose sentence is
not in the text is no evidence: it counts as unrelated, and says why. Nor is one whose
reason still says nothing after the re-ask (under three words, or its field's
description copied back): it counts as unrelated, kept marked degenerate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from dagmca.debate.dag.judge import quoted_sentence
from dagmca.debate.ledger.prefilter import Candidate
from dagmca.debate.state import SessionState
from dagmca.graph import CallPhase, DecisionMethod, LedgerVerdict, NodeKind
from dagmca.llm.base import CallMeta
from dagmca.llm.stack.reasons import hollow_reason
from dagmca.prompts.budget import Prompt
from dagmca.prompts.ledger import judge_claim, verdicts_schema
from dagmca.prompts.templates import Frame

AGENT = "ledger"  # who makes the ledger's calls, in the call records


@dataclass(frozen=True)
class Verdict:
    candidate: Candidate
    verdict: LedgerVerdict
    sentence: str
    reason: str
    method: DecisionMethod = DecisionMethod.LLM
    degenerate: bool = False  # its reason said nothing: unrelated, whatever the judge said

    @property
    def derives(self) -> bool:
        """The text states the claim or a part of it: the claim derives from it."""
        return self.verdict is not LedgerVerdict.UNRELATED


def meta(debate: str, agent: str = AGENT) -> CallMeta:
    return CallMeta(agent=agent, debate=debate, phase=CallPhase.LEDGER)


def is_passage(candidate: Candidate) -> bool:
    return candidate.first.kind is NodeKind.SESSION


async def judge(
    state: SessionState,
    frame: Frame,
    claim: str,
    candidates: Sequence[Candidate],
    debate: str,
    passage: Candidate | None = None,
) -> list[Verdict] | None:
    """The verdicts on `passage` (when the prefilter picked it: text 0, the passage the
    prompt carries at its top) and on `candidates` for `claim`, in that order; None when
    the claim could not be judged (the budget is spent, or the call failed): it is left
    untraced, for a later run to trace."""
    if not candidates and passage is None:
        return []
    if state.handles.llm.exhausted(reserve_calls=2):
        return None
    candidates = list(candidates)
    zero = passage is not None
    excerpt = passage.first.text if passage is not None and passage.first.excerpt else ""

    def prompt_of(picked: Sequence[Candidate]) -> Prompt:
        return judge_claim(frame, claim, [(c.first.label, c.first.text) for c in picked], zero, excerpt)

    prompt = prompt_of(candidates)
    # In a small context window the judge reads fewer texts whole rather than more cut:
    # the least similar go first, unjudged.
    while prompt.omitted_chars and len(candidates) > 1:
        candidates.remove(min(reversed(candidates), key=lambda c: c.similarity))
        prompt = prompt_of(candidates)
    schema = verdicts_schema(len(candidates), zero)
    tokens = state.handles.config.flag_tokens() * (len(candidates) + zero)
    done = await state.ask(prompt, schema=schema, max_tokens=tokens, meta=meta(debate))
    if done is None:
        return None
    given: dict[int, Any] = {}
    for v in done.parsed.verdicts:  # a text judged twice: its first verdict stands
        given.setdefault(v.text, v)
    hollow = _hollow(done.degenerate, given, prompt, schema)
    judged = [_verdict(c, given.get(i), hollow.get(i)) for i, c in enumerate(candidates, start=1)]
    return [_verdict(passage, given.get(0), hollow.get(0)), *judged] if passage is not None else judged


def _hollow(marked: str, given: dict[int, Any], prompt: Prompt, schema: type[BaseModel]) -> dict[int, str]:
    """Why each text's verdict has a reason that says nothing, by text: the reply came
    back marked (`marked`) and each verdict's own reason is read by the same rule; when
    none alone is hollow, every one is, as the reply was judged as a whole."""
    if not marked:
        return {}
    found = {
        k: why for k, v in given.items() if (why := hollow_reason(v, prompt.messages, schema)) is not None
    }
    return found or dict.fromkeys(given, marked)


def _verdict(candidate: Candidate, given: Any, hollow: str | None = None) -> Verdict:
    if given is None:
        return Verdict(candidate, LedgerVerdict.UNRELATED, "", "the judge gave no verdict on this text")
    verdict = LedgerVerdict(given.verdict)
    reason = given.reason.strip() or verdict.value
    if hollow is not None:
        why = f"the judge's reason says nothing ({hollow}): judged {verdict.value} ({reason}); unrelated"
        return Verdict(candidate, LedgerVerdict.UNRELATED, "", why, degenerate=True)
    if verdict is LedgerVerdict.UNRELATED:
        return Verdict(candidate, verdict, "", reason)
    sentence = quoted_sentence(given.sentence, candidate.first.text)
    if sentence is None:
        why = f"judged {verdict.value}, but the sentence it quoted is not in the text ({reason})"
        return Verdict(candidate, LedgerVerdict.UNRELATED, "", why)
    return Verdict(candidate, verdict, sentence, reason)
