"""The judge of the DAG's decisions: an embedding prefilter, tuned for
recall, picks the candidates; the LLM gives each a structured verdict with a reason.
With --judge embedding, similarity alone decides, and the decision says so.

Nothing here writes to the graph: callers turn a Decision into nodes and edges."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace

from dagmca.config import SessionConfig
from dagmca.debate.state import SessionState
from dagmca.graph import CallPhase, DebateNode, DecisionMethod, TensionNode
from dagmca.llm.base import CallMeta
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import DuplicateVerdict, PairVerdict, StubVerdict
from dagmca.similarity import words

UNDECIDED = "undecided"  # no verdict: the call was refused or failed, or the verdict changed with the order
SWAPPED = "judge-swapped"  # who asks a pair's second order, in the call records
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# How much of a quoted answering sentence must be words of one sentence of the text
# (a strong model may drop a clause or fix a typo; a weak one invents a sentence).
QUOTE_OVERLAP = 0.7
# A quote shorter than this many words stands for a sentence only when it covers
# QUOTE_COVER of that sentence's words.
QUOTE_MIN_WORDS = 5
QUOTE_COVER = 0.6


def hollow(verdict: str, reason: str, why: str, kept: str) -> tuple[str, str]:
    """A verdict whose reason says nothing, after a re-ask, as the verdict that does not
    act (`kept`: undecided, or a stub left open) and a reason that keeps the judge's: a
    decision a reader trusts for its reason is not taken on none."""
    return kept, f"the judge's reason says nothing ({why}): judged {verdict} ({reason}); left {kept}"


@dataclass(frozen=True)
class Decision:
    verdict: str
    reason: str
    method: DecisionMethod
    similarity: float
    claim: str = ""  # the shared claim (pairs) or the answering sentence (stubs)
    # a pair judged in both orders: (verdict, reason) with the earlier branch shown
    # first, then with the later one first
    orders: tuple[tuple[str, str], ...] = ()
    # the judge's reason said nothing, asked again once (under three words, or its
    # field's description copied back): the verdict is the one that does not act
    # (`hollow`), and the judge's own verdict is kept in the reason
    degenerate: bool = False

    def props(self) -> dict[str, str | float | bool]:
        """What an edge made by this decision records."""
        props: dict[str, str | float | bool] = {
            "method": self.method.value,
            "verdict": self.verdict,
            "similarity": round(self.similarity, 4),
            "reason": self.reason,
            "degenerate": self.degenerate,
        }
        if self.claim:
            props["claim"] = self.claim
        if self.orders:
            props["verdicts"] = " | ".join(v for v, _ in self.orders)
            props["reason_swapped"] = self.orders[-1][1]
        return props


async def pair(
    state: SessionState, earlier: DebateNode, later: DebateNode, parent: DebateNode, similarity: float
) -> Decision:
    """converge, contradict, elaborate or unrelated, for two finished branches that the
    prefilter passed, asked in both orders (the blocks and their labels swapped, the
    prompt otherwise the same): a judge that favours the first block, or the label A,
    gives two verdicts, and the pair is undecided. The embedding rule can only say
    converge (the texts are alike) or nothing: similarity cannot tell agreement from its negation."""
    cfg = state.handles.config
    if cfg.judge == "embedding":
        if similarity >= cfg.merge_threshold:
            return Decision(
                "converge",
                f"cosine {similarity:.2f} >= merge threshold {cfg.merge_threshold} (similarity alone, "
                "--judge embedding: a contradiction in similar words would merge too)",
                DecisionMethod.EMBEDDING,
                similarity,
            )
        return Decision("unrelated", f"cosine {similarity:.2f} below the merge threshold "
                        f"{cfg.merge_threshold}; no relation is judged without the LLM",
                        DecisionMethod.EMBEDDING, similarity)  # fmt: skip
    # both orders are asked, or neither: one order alone would decide by position
    if state.handles.llm.exhausted(reserve_calls=3):
        return Decision(UNDECIDED, "not judged: the budget is spent", DecisionMethod.LLM, similarity)
    frame = state.prompts.frame(parent)()
    first, second = (earlier.question, earlier.resolution), (later.question, later.resolution)
    meta = CallMeta(agent="judge", debate=parent.id, phase=CallPhase.JUDGE)
    swapped = CallMeta(agent=SWAPPED, debate=parent.id, phase=CallPhase.JUDGE)
    cap = cfg.flag_tokens()
    done = await asyncio.gather(
        state.ask(tpl.judge_pair(frame, first, second), schema=PairVerdict, max_tokens=cap, meta=meta),
        state.ask(tpl.judge_pair(frame, second, first), schema=PairVerdict, max_tokens=cap, meta=swapped),
    )
    if done[0] is None or done[1] is None:
        return Decision(UNDECIDED, "not judged: the judge's call failed", DecisionMethod.LLM, similarity)
    decision = both_orders(done[0].parsed, done[1].parsed, _short(earlier.id), _short(later.id), similarity)
    why = done[0].degenerate or done[1].degenerate
    if not why:
        return decision
    # either order's reason said nothing: the pair is not decided on it (no merge, no
    # relation; its group is held only if an order said contradict, see merging)
    verdict, reason = hollow(decision.verdict, decision.reason, why, UNDECIDED)
    return replace(decision, verdict=verdict, reason=reason, claim="", degenerate=True)


def _short(debate: str) -> str:
    return debate.rsplit("/", 1)[-1]


def both_orders(ab: PairVerdict, ba: PairVerdict, a: str, b: str, similarity: float) -> Decision:
    """One decision from the verdicts on a pair shown in both orders (`ab`: `a` shown
    first, as debate A). A verdict that changes with the order is a position's, not the
    texts': it is undecided, and nothing merges on it; both verdicts and reasons stay
    in its reason and its props."""
    reasons = (ab.reason.strip() or ab.verdict, ba.reason.strip() or ba.verdict)
    orders = ((ab.verdict, reasons[0]), (ba.verdict, reasons[1]))
    if ab.verdict != ba.verdict:
        reason = (
            f"the verdict changes with the order: {a} shown first, {ab.verdict} ({reasons[0]}); "
            f"{b} shown first, {ba.verdict} ({reasons[1]})"
        )
        return Decision(UNDECIDED, reason, DecisionMethod.LLM, similarity, orders=orders)
    claim = ""
    if ab.verdict in ("converge", "elaborate"):
        claim = ab.shared_claim.strip() or ba.shared_claim.strip()
    return Decision(ab.verdict, reasons[0], DecisionMethod.LLM, similarity, claim, orders)


async def stub(
    state: SessionState, tension: TensionNode, text_label: str, text: str, similarity: float
) -> Decision:
    """answered, relevant or open, for an open stub against a new node's text."""
    cfg = state.handles.config
    if cfg.judge == "embedding":
        # Similarity measures shared topic, not an answer: alone it never closes a stub.
        if similarity >= cfg.revisit_threshold:
            reason = f"cosine {similarity:.2f} >= revisit threshold {cfg.revisit_threshold}, similarity alone"
            return Decision("relevant", reason, DecisionMethod.EMBEDDING, similarity)
        reason = f"cosine {similarity:.2f} below the revisit threshold {cfg.revisit_threshold}"
        return Decision("open", reason, DecisionMethod.EMBEDDING, similarity)
    if similarity < cfg.stub_prefilter:
        reason = f"not judged: cosine {similarity:.2f} below the prefilter {cfg.stub_prefilter}"
        return Decision("open", reason, DecisionMethod.EMBEDDING, similarity)
    if state.handles.llm.exhausted(reserve_calls=2):
        return Decision("open", "not judged: the budget is spent", DecisionMethod.LLM, similarity)
    # The stub is judged in the frame of the debate that left it open.
    frame = state.prompts.frame(state.graph.debates[tension.debate])()
    prompt = tpl.judge_stub(frame, tension.question, text_label, text)
    meta = CallMeta(agent="judge", debate=tension.debate, phase=CallPhase.JUDGE)
    done = await state.ask(prompt, schema=StubVerdict, max_tokens=cfg.flag_tokens(), meta=meta)
    if done is None:
        return Decision("open", "not judged: the judge's call failed", DecisionMethod.LLM, similarity)
    verdict: StubVerdict = done.parsed
    reason = verdict.reason.strip() or verdict.verdict
    if done.degenerate:  # neither closes nor reopens the stub: it stays open
        kept, why = hollow(verdict.verdict, reason, done.degenerate, "open")
        return Decision(kept, why, DecisionMethod.LLM, similarity, degenerate=True)
    if verdict.verdict != "answered":
        return Decision(verdict.verdict, reason, DecisionMethod.LLM, similarity)
    sentence = quoted_sentence(verdict.answering_sentence, text)
    if sentence is None:
        # An answer nobody can point to is not an answer: the stub stays explorable.
        reason = f"judged answered, but the answering sentence it quoted is not in the text ({reason})"
        return Decision("relevant", reason, DecisionMethod.LLM, similarity)
    return Decision("answered", reason, DecisionMethod.LLM, similarity, sentence)


async def duplicate(
    state: SessionState, earlier: TensionNode, later: TensionNode, similarity: float
) -> Decision:
    """duplicate or distinct, for two open stubs whose questions the prefilter passed.
    Embeddings cannot tell a paraphrase from another question in nearly the same words,
    so alone (--judge embedding) they merge only near-restatements."""
    cfg = state.handles.config
    if cfg.judge == "embedding":
        threshold = cfg.duplicate_threshold
        if similarity >= threshold:
            reason = f"cosine {similarity:.2f} >= duplicate threshold {threshold}, similarity alone"
            return Decision("duplicate", reason, DecisionMethod.EMBEDDING, similarity)
        reason = f"cosine {similarity:.2f} below the duplicate threshold {threshold}"
        return Decision("distinct", reason, DecisionMethod.EMBEDDING, similarity)
    if state.handles.llm.exhausted(reserve_calls=2):
        return Decision(UNDECIDED, "not judged: the budget is spent", DecisionMethod.LLM, similarity)
    # in the frame of the later stub's debate: the one whose open question may go
    prompt = tpl.judge_duplicate(
        state.prompts.frame(state.graph.debates[later.debate])(), earlier.question, later.question
    )
    meta = CallMeta(agent="judge", debate=later.debate, phase=CallPhase.JUDGE)
    done = await state.ask(prompt, schema=DuplicateVerdict, max_tokens=cfg.flag_tokens(), meta=meta)
    if done is None:
        return Decision(UNDECIDED, "not judged: the judge's call failed", DecisionMethod.LLM, similarity)
    verdict: DuplicateVerdict = done.parsed
    reason = verdict.reason.strip() or verdict.verdict
    if done.degenerate:  # merges nothing, as a verdict not given
        kept, why = hollow(verdict.verdict, reason, done.degenerate, UNDECIDED)
        return Decision(kept, why, DecisionMethod.LLM, similarity, degenerate=True)
    return Decision(verdict.verdict, reason, DecisionMethod.LLM, similarity)


def most_similar(cfg: SessionConfig, sims: list[float]) -> set[int]:
    """Which stubs the LLM judge checks against a new text: past the prefilter, the
    --max-stub-checks most similar (of equal similarity at 4 decimals, the earlier: a
    batch's float noise must not pick). With --judge embedding every stub is decided, as
    that costs no call."""
    if cfg.judge == "embedding":
        return set(range(len(sims)))
    passed = [i for i, s in enumerate(sims) if s >= cfg.stub_prefilter]
    return set(sorted(passed, key=lambda i: (-round(sims[i], 4), i))[: cfg.max_stub_checks])


async def not_checked(cfg: SessionConfig, similarity: float) -> Decision:
    """A stub left open without a call: below the prefilter, or past the checks allowed."""
    if similarity < cfg.stub_prefilter:
        reason = f"not judged: cosine {similarity:.2f} below the prefilter {cfg.stub_prefilter}"
    else:
        reason = (
            f"not judged: cosine {similarity:.2f} passed the prefilter, but {cfg.max_stub_checks} more "
            f"similar stubs were judged against this text (--max-stub-checks)"
        )
    return Decision("open", reason, DecisionMethod.EMBEDDING, similarity)


def quoted_sentence(quote: str, text: str) -> str | None:
    """The whole sentence of `text` that `quote` quotes (most of the quote's words in one
    sentence), as the text has it; None when it quotes nothing there. A quote of fewer
    than QUOTE_MIN_WORDS words must also cover most of that sentence: a fragment such as
    "the" is in nearly every sentence and points at none, so it cannot stand for one."""
    wanted = words(quote)
    if not wanted:
        return None
    best, best_share = "", 0.0
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        share = len(wanted & words(sentence)) / len(wanted)
        if sentence and share > best_share:
            best, best_share = sentence, share
    verbatim = " ".join(quote.split()) in " ".join(text.split())  # it may run across sentences
    if best_share < QUOTE_OVERLAP and not verbatim:
        return None
    if len(quote.split()) < QUOTE_MIN_WORDS and len(wanted & words(best)) < QUOTE_COVER * len(words(best)):
        return None
    return best
