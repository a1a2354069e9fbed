"""The judge of a study: two members of two samples, read in both orders.

Two tensions are asked the duplicate-question prompt (do they ask one question?), two
claims whether they state the same thing; each pair in both orders (the texts and their
labels swapped, the prompt otherwise the same). A verdict that changes with the order
is the position's, not the texts': the pair is `undecided`, never a match. So is a pair
whose reason said nothing (asked again once, as every judged reason is) and one the
judge gave no verdict on (its call failed, or the budget was spent: `unjudged`, which
a rerun asks again). Two short answers are compared by the evaluation's scorer, each
as the other's reference, in both orders too.

Nothing here writes to the graph: `records` turns a Judged into its relationship."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel

from dagmca.graph import AlignVerdict, CallPhase, DecisionMethod, FindingKind, JSONScalar
from dagmca.llm.base import CallMeta, Completion, LLMError, Request
from dagmca.llm.metered import MeteredLLM
from dagmca.prompts import alignment
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import Prompt
from dagmca.prompts.schemas import DuplicateVerdict, SameClaimVerdict
from dagmca.prompts.templates import Frame
from dagmca.scoring import score_exact
from dagmca.stability.candidates import Candidate
from dagmca.stability.members import Member

# the judge's word for a match, by what it judges
MATCHES = {FindingKind.TENSION: "duplicate", FindingKind.CLAIM: "same"}
SCHEMAS: dict[FindingKind, type[BaseModel]] = {
    FindingKind.TENSION: DuplicateVerdict,
    FindingKind.CLAIM: SameClaimVerdict,
}
AGENT, SWAPPED = "align", "align-swapped"  # who asks each order, in the call records


@dataclass(frozen=True)
class Judged:
    """One pair's verdict. `orders`: (verdict, reason) with `first` shown first, then
    with `second` shown first. `unjudged`: no verdict was had (a rerun asks again)."""

    first: Member
    second: Member
    verdict: AlignVerdict
    reason: str
    similarity: float
    method: DecisionMethod
    orders: tuple[tuple[str, str], ...] = ()
    unjudged: bool = False
    degenerate: bool = False

    def props(self) -> dict[str, JSONScalar]:
        """What its COMPARED_WITH relationship records (beside the study)."""
        props: dict[str, JSONScalar] = {
            "kind": self.first.kind.value,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "similarity": round(self.similarity, 4),
            "method": self.method.value,
        }
        if self.orders:
            props["verdicts"] = " | ".join(v for v, _ in self.orders)
            props["reason_swapped"] = self.orders[-1][1]
        if self.unjudged:
            props["unjudged"] = True
        if self.degenerate:
            props["degenerate"] = True
        return props


def combine(c: Candidate, orders: tuple[tuple[str, str], ...], match: str) -> Judged:
    """One verdict from both orders' (verdict, reason): a match or distinct only when
    the two agree; else undecided, both verdicts and reasons kept."""
    (one, why), (two, why_swapped) = orders
    if one != two:
        reason = (
            f"the verdict changes with the order: {c.first.id} shown first, {one} ({why}); "
            f"{c.second.id} shown first, {two} ({why_swapped})"
        )
        return Judged(
            c.first, c.second, AlignVerdict.UNDECIDED, reason, c.similarity, DecisionMethod.LLM, orders
        )
    verdict = AlignVerdict.MATCH if one == match else AlignVerdict.DISTINCT
    return Judged(c.first, c.second, verdict, why, c.similarity, DecisionMethod.LLM, orders)


def same_answer(c: Candidate) -> Judged:
    """Two short answers by the evaluation's scorer, each as the other's reference: the
    same answer when each is right against the other."""
    ab = bool(score_exact(c.first.text, c.second.text).correct)
    ba = bool(score_exact(c.second.text, c.first.text).correct)
    said = {True: "same", False: "different"}
    orders = (
        (said[ab], f"{c.first.text!r} against {c.second.text!r} as the reference"),
        (said[ba], f"{c.second.text!r} against {c.first.text!r} as the reference"),
    )
    if ab != ba:
        reason = f"the scorer's verdict changes with which answer is the reference: {orders[0][1]}, " + (
            f"{said[ab]}; {orders[1][1]}, {said[ba]}"
        )
        return Judged(c.first, c.second, AlignVerdict.UNDECIDED, reason, 1.0, DecisionMethod.SCORER, orders)
    verdict = AlignVerdict.MATCH if ab else AlignVerdict.DISTINCT
    reason = "the scorer reads them as one answer" if ab else "the scorer reads them as different answers"
    return Judged(c.first, c.second, verdict, reason, 1.0, DecisionMethod.SCORER, orders)


def prompt_for(frame: Frame, kind: FindingKind, first: str, second: str) -> Prompt:
    """The judge's prompt on two members (`first` shown first)."""
    if kind is FindingKind.TENSION:
        return tpl.judge_duplicate(frame, first, second)
    return alignment.judge_same_claim(frame, first, second)


class Judge:
    """The study's judge role on `llm` (its calls logged under the study), in `frame`:
    `cap` tokens a reply, at the base settings' temperature and seed."""

    def __init__(self, llm: MeteredLLM, frame: Frame, *, cap: int, temperature: float, seed: int) -> None:
        self.llm, self.frame, self.cap = llm, frame, cap
        self.temperature, self.seed = temperature, seed

    async def pair(self, c: Candidate) -> Judged:
        """The pair in both orders (asked together), or unjudged without a call when the
        budget cannot take both: one order alone would decide by position."""
        kind = c.first.kind
        if self.llm.exhausted(reserve_calls=2):
            return self._unjudged(c, "not judged: the budget is spent")
        ab, ba = await asyncio.gather(
            self._ask(prompt_for(self.frame, kind, c.first.text, c.second.text), kind, AGENT),
            self._ask(prompt_for(self.frame, kind, c.second.text, c.first.text), kind, SWAPPED),
        )
        if ab is None or ba is None:
            return self._unjudged(c, "not judged: the judge's call failed")
        orders = tuple(
            (str(getattr(d.parsed, "verdict", "")), str(getattr(d.parsed, "reason", "")).strip())
            for d in (ab, ba)
        )
        judged = combine(c, orders, MATCHES[kind])
        hollow = ab.degenerate or ba.degenerate
        if not hollow:
            return judged
        # a reason that said nothing, after a re-ask: no match is taken on it
        reason = (
            f"the judge's reason says nothing ({hollow}): judged {judged.verdict.value} ({judged.reason}); "
        )
        return Judged(
            c.first, c.second, AlignVerdict.UNDECIDED, reason + "left undecided", c.similarity,
            DecisionMethod.LLM, judged.orders, degenerate=True,
        )  # fmt: skip

    async def _ask(self, prompt: Prompt, kind: FindingKind, agent: str) -> Completion | None:
        meta = CallMeta(agent=agent, phase=CallPhase.JUDGE, omitted_chars=prompt.omitted_chars)
        request = Request(
            prompt.messages, schema=SCHEMAS[kind], max_tokens=self.cap, temperature=self.temperature,
            seed=self.seed, meta=meta,
        )  # fmt: skip
        try:
            return await self.llm.complete(request)
        except LLMError:  # a failed call, or one the budget refused: a rerun asks it again
            return None

    def _unjudged(self, c: Candidate, reason: str) -> Judged:
        return Judged(
            c.first, c.second, AlignVerdict.UNDECIDED, reason, c.similarity, DecisionMethod.LLM, unjudged=True
        )
