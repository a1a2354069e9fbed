"""What an alignment will cost, known before its first call: the prefilter's candidates
are computed from embeddings alone, and each is two judge calls (both orders), whose
prompts are counted as they will be sent and whose replies are charged at the judge's
cap. Answers cost nothing: the scorer compares them.

Before the sessions exist (`run --samples --dry-run`) only a bound can be given: every
two of the n samples compare each of a session's m members with at most c members of
the other, in both directions, so at most c·m·n·(n−1) pairs, twice as many calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dagmca.config import SessionConfig
from dagmca.graph import FindingKind, ModelRole
from dagmca.llm.base import Usage
from dagmca.llm.factory import model_name
from dagmca.llm.prices import resolve_prices
from dagmca.llm.tokens import ASSUMED_WINDOW, TokenCounter, known_window
from dagmca.prompts.budget import PromptBudget
from dagmca.prompts.templates import Frame
from dagmca.stability.candidates import Candidate
from dagmca.stability.judging import prompt_for
from dagmca.stability.models import AlignCost


def judge_budget(
    cfg: SessionConfig, window: int | None = None, counter: TokenCounter | None = None
) -> PromptBudget:
    """The judge role's prompt budget: `window` tokens (else its setting, a known
    model's, or the assumed window)."""
    judge = cfg.role(ModelRole.JUDGE)
    tokens = window or judge.context_window or known_window(model_name(judge)) or ASSUMED_WINDOW
    return PromptBudget(
        counter=counter or TokenCounter(), window=tokens, turn=judge.turn_tokens(), flag=judge.flag_tokens(),
        synthesis=judge.synthesis_tokens(), final=judge.final_tokens(),
    )  # fmt: skip


def align_cost(
    cfg: SessionConfig, frame: Frame, judged: Mapping[FindingKind, Sequence[Candidate]], scored: int
) -> AlignCost:
    """The cost of judging every candidate of `judged` in both orders, and `scored`
    answer pairs by the scorer."""
    judge = cfg.role(ModelRole.JUDGE)
    model = model_name(judge)
    prices = resolve_prices(judge, model)
    prompt = sum(
        prompt_for(frame, kind, c.first.text, c.second.text).tokens
        + prompt_for(frame, kind, c.second.text, c.first.text).tokens
        for kind, found in judged.items()
        for c in found
    )
    calls = 2 * sum(len(found) for found in judged.values())
    completion = calls * frame.budget.flag
    return AlignCost(
        pairs={kind.value: len(found) for kind, found in judged.items()},
        scored=scored,
        calls=calls,
        prompt_tokens=prompt,
        completion_tokens_max=completion,
        cost_usd_max=round(prices.cost(Usage(prompt_tokens=prompt, completion_tokens=completion)), 6),
        model=model,
        prices=prices.source,
    )


def pairs_bound(samples: int, members: int, per_member: int) -> int:
    """At most how many pairs a study of `samples` sessions of `members` members each
    (tensions and claims) judges, `per_member` candidates a member."""
    return per_member * members * samples * (samples - 1)
