"""The entailment check of a claim that no text states: one call, against the passage
and the earlier texts the prefilter picked for the claim, that names the sentences the
claim follows from (the evidence, before the verdict) or says what the claim adds. A
quoted sentence that is not in its text is no support; a claim judged to follow with no
sentence found does not follow, nor does one whose reason still says nothing after the
re-ask (under three words, or its field's description copied back)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.debate.dag.judge import quoted_sentence
from dagmca.debate.ledger.prefilter import Candidate
from dagmca.debate.ledger.verdicts import Verdict, meta
from dagmca.debate.state import SessionState
from dagmca.graph import DecisionMethod, LedgerVerdict
from dagmca.prompts.budget import Prompt
from dagmca.prompts.ledger import entail_claim, entailment_schema
from dagmca.prompts.templates import Frame

AGENT = "ledger-entailment"  # who makes the entailment checks, in the call records
# who makes the recombination checks (is a claim whose parts two specialists state
# supported whole by those parts' sentences?), in the call records
RECOMBINATION = "ledger-recombination"


@dataclass(frozen=True)
class Entailment:
    follows: bool
    reason: str
    support: tuple[Verdict, ...] = ()  # `supports` verdicts on the texts it follows from
    method: DecisionMethod = DecisionMethod.LLM
    degenerate: bool = False  # its reason said nothing, asked again once: it does not follow


async def entail(
    state: SessionState,
    frame: Frame,
    claim: str,
    candidates: Sequence[Candidate],
    passage: Candidate | None,
    debate: str,
    agent: str = AGENT,
) -> Entailment | None:
    """Whether `claim` follows from `passage` (text 0) and `candidates`; None when it
    could not be checked (the budget is spent, or the call failed): the claim is then
    left untraced, for a later run to trace. `agent`: who asks, in the call records."""
    if not candidates and passage is None:
        why = "no earlier text comes near it and there is no passage: nothing it could follow from"
        return Entailment(False, why, method=DecisionMethod.EMBEDDING)
    if state.handles.llm.exhausted(reserve_calls=2):
        return None
    candidates = list(candidates)
    zero = passage is not None
    excerpt = passage.first.text if passage is not None and passage.first.excerpt else ""

    def prompt_of(picked: Sequence[Candidate]) -> Prompt:
        return entail_claim(frame, claim, [(c.first.label, c.first.text) for c in picked], zero, excerpt)

    prompt = prompt_of(candidates)
    while prompt.omitted_chars and candidates:  # as the verdicts: fewer texts, each whole
        candidates.remove(min(reversed(candidates), key=lambda c: c.similarity))
        prompt = prompt_of(candidates)
    schema = entailment_schema(len(candidates), zero)
    tokens = state.handles.config.flag_tokens() * (len(candidates) + 2)
    done = await state.ask(prompt, schema=schema, max_tokens=tokens, meta=meta(debate, agent))
    if done is None:
        return None
    reason = done.parsed.reason.strip() or done.parsed.verdict
    if done.degenerate:  # a step nobody can check is not support: the claim is unsupported
        why = f"the check's reason says nothing ({done.degenerate}): judged {done.parsed.verdict} ({reason})"
        return Entailment(False, why, degenerate=True)
    if done.parsed.verdict != "follows":
        return Entailment(False, reason)
    support: dict[str, Verdict] = {}
    for item in done.parsed.support:
        number = int(item.text)
        source = passage if number == 0 else (candidates[number - 1] if number <= len(candidates) else None)
        if source is None:
            continue
        sentence = quoted_sentence(item.sentence, source.first.text)
        if sentence is not None and source.first.node not in support:  # a text's first sentence stands
            support[source.first.node] = Verdict(source, LedgerVerdict.SUPPORTS, sentence, reason)
    if not support:
        return Entailment(False, f"judged to follow, but no sentence it quoted is in its text ({reason})")
    return Entailment(True, reason, tuple(support.values()))
