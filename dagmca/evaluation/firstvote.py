"""`first-vote` as Choi et al. (2025) define it: the plurality of the agents' answers
from the respond phase of the debate's first round, before any agent has read another.

It is read from the session its source arm (`mca`, `dag`) already ran: each first-round
respond turn of the main debate is read by the same short-answer step every arm's final
goes through (the `ShortAnswer` call of the final role, its prompt the session's), and
the answers' plurality is scored as a vote's is. Its cost is the cost of the calls it
rests on: the first round's respond calls (made by its source, so counted in the eval's
spend once) and its own extraction calls (logged under the source's id with a
`-first-vote` suffix, and read back from the cache on a rerun). A session with no
first-round answer (stopped before its first round ended) leaves the task unread: it is
counted, never scored wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.evaluation.consistency import plurality
from dagmca.evaluation.pairs import Finished
from dagmca.evaluation.records import UNREAD, RunRecord
from dagmca.evaluation.scoring import Score, score
from dagmca.evaluation.tasks import Task
from dagmca.graph import CallPhase, CallRecord, NodeKind, Phase
from dagmca.graph.calls import prompt_tokens, spent
from dagmca.llm.base import CallMeta, Completer, LLMError, Request
from dagmca.llm.stack.base import BudgetExhausted
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import ShortAnswer
from dagmca.store.base import GraphStore

DEFAULT_WINDOW = 8192  # tokens: a prompt's window when the settings name none


@dataclass(frozen=True)
class FirstRound:
    """The main debate's first-round respond turns (agent, text), and the calls that
    made them, as the source session stored them."""

    turns: list[tuple[str, str]]
    calls: list[CallRecord]


def first_round(store: GraphStore, session: str) -> FirstRound:
    main = f"{session}/main"
    turns = sorted(
        (
            n
            for n in store.nodes(session, NodeKind.TURN)
            if n.props.get("debate") == main
            and n.props.get("phase") == Phase.RESPOND.value
            and int(str(n.props.get("round", 0))) == 1
            and str(n.props.get("text") or "").strip()
        ),
        key=lambda n: str(n.props.get("agent")),
    )
    agents = {str(n.props.get("agent")) for n in turns}
    calls, seen = [], set()
    for c in store.calls(session):  # each leaf's first respond call (and its tries) is round 1's
        if c.debate == main and c.phase == Phase.RESPOND.value and c.agent in agents and c.agent not in seen:
            calls.append(c)
            if not c.reask and not c.error:
                seen.add(c.agent)
    return FirstRound([(str(n.props.get("agent")), str(n.props.get("text"))) for n in turns], calls)


def frame(task: Task, cfg: SessionConfig) -> tpl.Frame:
    """The short-answer step's frame for a task, as a session of `cfg` sets it: the
    passage block, the question under debate and the settings' output caps."""
    from dagmca.llm.factory import model_name
    from dagmca.llm.tokens import TokenCounter, known_window
    from dagmca.prompts.budget import PromptBudget

    window = cfg.context_window or known_window(model_name(cfg)) or DEFAULT_WINDOW
    budget = PromptBudget(
        counter=TokenCounter(), window=window, turn=cfg.turn_tokens(), flag=cfg.flag_tokens(),
        synthesis=cfg.synthesis_tokens(), final=cfg.final_tokens(),
    )  # fmt: skip
    return tpl.Frame(question=task.question, passage=tpl.passage_block(task.passage or ""), budget=budget)


async def extract(
    llm: Completer, task: Task, cfg: SessionConfig, text: str, debate: str, seed: int
) -> str | None:
    """One agent's first answer in the fewest words, by the short-answer call; None when
    the call fails or the text gives none (a missing answer, as for any arm)."""
    meta = CallMeta(agent="first-answer", debate=debate, phase=CallPhase.FINAL.value)
    prompt = tpl.short_answer(frame(task, cfg), text)
    request = Request(
        prompt.messages, schema=ShortAnswer, max_tokens=cfg.flag_tokens(), temperature=cfg.temperature,
        seed=seed, meta=meta,
    )  # fmt: skip
    try:
        done = await llm.complete(request)
    except BudgetExhausted:  # not asked: the task is left for a rerun with a raised budget
        raise
    except LLMError:
        return None
    if not isinstance(done.parsed, ShortAnswer):
        return None
    answer = done.parsed.answer.strip()
    return None if not answer or answer.lower().strip(".") == "no answer" else answer


def unread(arm: str, task: Task, repeat: int, source: RunRecord) -> Finished:
    """No first-round answer to read: the task is unread for first-vote, not wrong."""
    record = RunRecord(
        arm=arm, protocol="first-vote", task=task.id, repeat=repeat, session=source.session, status=UNREAD,
        answer=None, score=Score(None, parsed=False), calls=0, tokens=0, cost_usd=0.0, samples=0,
    )  # fmt: skip
    return Finished(record, None)


def first_vote(
    arm: str,
    task: Task,
    repeat: int,
    source: RunRecord,
    answers: Sequence[str | None],
    rests_on: Sequence[CallRecord],
    extraction: Sequence[CallRecord],
    tolerance: float,
) -> Finished:
    """The arm's record: the plurality of the extracted `answers`, scored; its spend the
    first round's respond calls (`rests_on`, made by the source and `borrowed` so the
    eval's spend counts them once) and the extraction's calls."""
    pick = plurality(task, list(answers), tolerance)
    answer = answers[pick] if pick is not None else None
    borrowed, own = spent(rests_on), spent(extraction)
    record = RunRecord(
        arm=arm, protocol="first-vote", task=task.id, repeat=repeat, session=source.session,
        status=source.status, answer=answer, score=score(task, answer, tolerance),
        calls=borrowed[0] + own[0], tokens=borrowed[1] + own[1], cost_usd=borrowed[2] + own[2],
        prompt_tokens=prompt_tokens(rests_on) + prompt_tokens(extraction), samples=0,
        borrowed_calls=borrowed[0], borrowed_tokens=borrowed[1], borrowed_cost_usd=borrowed[2],
    )  # fmt: skip
    return Finished(record, None)
