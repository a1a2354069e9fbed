"""Prompts of the peer protocols, vote (MassGen-style) and ensemble. Peers' answers
appear under anonymous labels (agent2.1: agent 2's first answer), never by name or
perspective, so a vote is for an answer, not for who wrote it."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.prompts.agents import AGAINST_CONFORMITY, perspective, role_for
from dagmca.prompts.budget import Part, Prompt, PromptBudget
from dagmca.prompts.templates import Frame, messages, quote
from dagmca.team import Agent

DECISION_EXTRA_TOKENS = 80  # the JSON around an answer in a decision


def _who(agent: Agent, number: int) -> str:
    return f"You are agent{number}, answering from {perspective(agent.perspective)}."


def _length(frame: Frame) -> str:
    return PromptBudget.prose(frame.budget.turn)


def first_answer(agent: Agent, number: int, frame: Frame, context: Sequence[Part] = ()) -> Prompt:
    """Written before the agent has seen any peer answer (first-answer protection)."""
    parts = [*context, f"{_who(agent, number)} Answer the question. {_length(frame)}"]
    return messages(frame, parts, frame.budget.turn, role_for(agent, single=True))


def decision(
    agent: Agent,
    number: int,
    frame: Frame,
    answers: Sequence[tuple[str, str]],
    own_label: str,
    may_answer: bool,
    correction: str = "",
) -> Prompt:
    parts: list[Part] = [
        quote(f"Answer {label}" + (" (yours)" if label == own_label else ""), text) for label, text in answers
    ]
    labels = ", ".join(label for label, _ in answers)
    if may_answer:
        ask = (
            "Decide: either vote for the best answer above (action vote, vote_for one of "
            f"{labels}, new_answer empty) or, if you can clearly do better than all of them, "
            "write a new answer (action new_answer, new_answer your full answer, vote_for empty)."
        )
    else:
        ask = (
            f"You may not write another answer now. Vote for the best answer: action vote, vote_for "
            f"one of {labels}, new_answer empty."
        )
    parts.append(
        f"{_who(agent, number)} {ask} {AGAINST_CONFORMITY} Add a one-sentence reason. "
        "Reply with one JSON object."
    )
    if correction:
        parts.append(f"Your previous reply was rejected: {correction}. Choose exactly one action.")
    reserve = frame.budget.turn + DECISION_EXTRA_TOKENS
    return messages(frame, parts, reserve, role_for(agent, single=True))


def _final(
    agent: Agent,
    number: int,
    frame: Frame,
    heading: str,
    own: str,
    others: Sequence[tuple[str, str]],
    ask: str,
) -> Prompt:
    parts: list[Part] = [quote(heading, own)]
    parts += [quote(f"Answer {label}", text) for label, text in others]
    parts.append(f"{_who(agent, number)} {ask} {AGAINST_CONFORMITY} {_length(frame)}")
    return messages(frame, parts, frame.budget.turn, role_for(agent, single=True))


def present(agent: Agent, number: int, frame: Frame, own: str, others: Sequence[tuple[str, str]]) -> Prompt:
    """vote: the winner presents the final answer."""
    ask = (
        "Your answer won the vote. Present the final answer, improving yours where the others add something."
    )
    return _final(agent, number, frame, "Your winning answer", own, others, ask)


def ballot(agent: Agent, number: int, frame: Frame, answers: Sequence[tuple[str, str]]) -> Prompt:
    parts: list[Part] = [quote(f"Answer {label}", text) for label, text in answers]
    labels = ", ".join(label for label, _ in answers)
    parts.append(
        f"{_who(agent, number)} Vote for the best answer: vote_for one of {labels}, and a "
        f"one-sentence reason. {AGAINST_CONFORMITY} Reply with one JSON object."
    )
    return messages(frame, parts, frame.budget.flag, role_for(agent, single=True))


def synthesize_winner(
    agent: Agent, number: int, frame: Frame, own: str, others: Sequence[tuple[str, str]]
) -> Prompt:
    """ensemble: the winner writes the group's answer with the others' strongest points."""
    ask = "Write the group's final answer: keep yours as the spine and add the strongest point of each other."
    return _final(agent, number, frame, "Your answer, which the group voted best", own, others, ask)
