"""Prompts of the debating agents (DESIGN §2): one competency system prompt per role,
and one builder per phase of the MCA rounds, its second-seed options and the
top-down baseline. Each returns chat messages, bounded in size."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.llm.base import Message
from dagmca.models import Role
from dagmca.prompts.templates import SYSTEM, Frame, messages, quote
from dagmca.team import Agent
from dagmca.text import clip

SIGNAL_CHARS = 400
GOAL_CHARS = 400

# Per role, not per perspective: every specialist shares one system prompt, so a
# server's prefix cache still serves the passage that follows it to all of them.
COMPETENCY = {
    Role.SPECIALIST: (
        "You are a specialist in a research team. You are not assigned a subtask: you analyse "
        "the whole question through your own perspective and contribute the most valuable "
        "insight you can from it. With peers you keep your perspective while integrating "
        "what they add. Be concise and substantive."
    ),
    Role.COORDINATOR: (
        "You are a coordinator in a research team. You observe the specialists below you and "
        "name what emerges from the combination of their views that none of them said "
        "alone: patterns, contradictions, synergies, gaps. You never assign tasks or tell "
        "anyone what to do; you observe and synthesize."
    ),
    Role.INTEGRATOR: (
        "You are the lead integrator of a research team. You read what emerged below you and "
        "form a coherent, holistic answer that keeps the best emergent insights. You do not "
        "direct the process; you make sense of it."
    ),
}
DECOMPOSER = (
    "You lead a team top-down: you split a question into one subtask per member, and later "
    "combine their answers into one."
)

CRITICAL_SIGNALS = ("goal_mismatch", "needs_reframing", "contradiction_detected")


def system_for(agent: Agent, single: bool = False) -> str:
    role = Role.SPECIALIST if single else agent.role
    return f"{SYSTEM}\n\n{COMPETENCY[role]}"


def _task(agent: Agent, single: bool = False) -> str:
    view = f" from the {agent.perspective} perspective" if single or agent.role is Role.SPECIALIST else ""
    return f"You are agent {agent.name}{view}. Answer in plain prose, at most five sentences."


def _agent_msgs(
    agent: Agent, frame: Frame, parts: list[str], goal: str, single: bool = False
) -> list[Message]:
    if goal:  # --broadcast: the team's goal replaces the bare question as what to aim at
        parts.insert(0, quote("The team's goal, as your integrator states it", goal, GOAL_CHARS))
    return messages(frame, parts, system_for(agent, single))


def kept_part(kept: Sequence[str]) -> str:
    """An agent's context: what it contributed before that the group kept (DESIGN §3)."""
    return "Your earlier contributions that the group kept:\n" + "\n".join(f"- {k}" for k in kept)


def respond(
    agent: Agent,
    frame: Frame,
    previous: str = "",
    signal: str = "",
    single: bool = False,
    goal: str = "",
    kept: Sequence[str] = (),
) -> list[Message]:
    parts = [kept_part(kept)] if kept else []
    if previous:
        parts.append(quote("Your previous response", previous))
    if signal:
        parts.append(quote("A nudge from your coordinator (you may ignore it)", signal, SIGNAL_CHARS))
    ask = "Give your view." if not previous else "Give your updated view."
    parts.append(f"{_task(agent, single)} {ask}")
    return _agent_msgs(agent, frame, parts, goal, single)


def lateral(
    agent: Agent, frame: Frame, own: str, siblings: Sequence[tuple[Agent, str]], goal: str = ""
) -> list[Message]:
    parts = [quote("Your response", own)]
    for sib, text in siblings:
        parts.append(quote(f"{sib.name} ({sib.perspective})", text))
    parts.append(
        f"{_task(agent)} Your peers answered too. Keep your own perspective; name where you "
        "disagree, fill what they missed, and revise where they improve your answer. If "
        "nothing should change, repeat your response."
    )
    return _agent_msgs(agent, frame, parts, goal)


def observe(
    agent: Agent, frame: Frame, children: Sequence[tuple[Agent, str]], previous: str = "", goal: str = ""
) -> list[Message]:
    parts = [quote(f"{child.name} ({child.perspective})", text) for child, text in children]
    if previous:
        parts.append(quote("Your previous synthesis", previous))
    parts.append(
        f"{_task(agent)} What emerges from these together that none of them said alone? "
        "Where do they contradict each other, and what is missing? Write the synthesis, "
        "not a summary of each."
    )
    return _agent_msgs(agent, frame, parts, goal)


def signal(agent: Agent, frame: Frame, own: str, goal: str = "") -> list[Message]:
    parts = [
        quote("Your current synthesis", own),
        f"{_task(agent)} Write a 2-3 sentence nudge to the agents below you for the next "
        "round: blind spots, tensions worth developing. Suggest, do not direct.",
    ]
    return _agent_msgs(agent, frame, parts, goal)


def strange_loop(agent: Agent, frame: Frame, own: str, goal: str = "") -> list[Message]:
    parts = [
        quote("Your integrated answer", own),
        f"{_task(agent)} Reflect on your own answer: what did you miss, where are you "
        "overconfident? Write only the improved final answer.",
    ]
    return _agent_msgs(agent, frame, parts, goal)


# -- second-seed options -------------------------------------------------------------
def broadcast(agent: Agent, frame: Frame, reason: str = "", previous_goal: str = "") -> list[Message]:
    """The goal broadcast (--broadcast), or a re-broadcast after a critical signal from below."""
    parts = []
    if previous_goal:
        parts.append(quote("The goal you stated before", previous_goal, GOAL_CHARS))
    if reason:
        parts.append(quote("Signals from your team", reason, SIGNAL_CHARS))
        ask = "Restate the goal for your team so it answers these signals"
    else:
        ask = "State the goal for your team: what a good answer to the question must achieve"
    parts.append(f"You are agent {agent.name}. {ask}, in 2-3 sentences. Do not answer the question.")
    return messages(frame, parts, system_for(agent))


def reflect(agent: Agent, frame: Frame, own: str, goal: str = "") -> list[Message]:
    parts = [
        quote("Your latest output", own),
        f"You are agent {agent.name}. Judge your latest output against the question"
        f"{' and the goal' if goal else ''}. Reply with one JSON object: satisfaction from 0 "
        "(useless) to 1 (fully satisfied); signal: none, or what your parent should know "
        "(unexpected_finding, goal_mismatch, needs_reframing, contradiction_detected, "
        "resource_request); note: one sentence why.",
    ]
    return _agent_msgs(agent, frame, parts, goal)


# -- the top-down baseline (--protocol decompose) ---------------------------------------
def decompose(agent: Agent, frame: Frame, task: str, parts_count: int) -> list[Message]:
    parts = [
        quote("Your task", task, GOAL_CHARS),
        f"You are agent {agent.name}. Split this task into exactly {parts_count} subtasks, one "
        "per member of your team, together covering it. Reply with one JSON object: subtasks, "
        "a list of one-sentence subtasks.",
    ]
    return messages(frame, parts, f"{SYSTEM}\n\n{DECOMPOSER}")


def answer_subtask(agent: Agent, frame: Frame, subtask: str) -> list[Message]:
    parts = [
        quote("Your subtask", subtask, GOAL_CHARS),
        f"You are agent {agent.name}. Answer your subtask only, in plain prose, at most five sentences.",
    ]
    return messages(frame, parts, SYSTEM)


def synthesize_answers(agent: Agent, frame: Frame, answers: Sequence[tuple[str, str, str]]) -> list[Message]:
    """The root's one synthesis of every leaf's answer: (agent, subtask, answer)."""
    parts = [quote(f"{name} on: {clip(subtask, 160)}", text) for name, subtask, text in answers]
    parts.append(
        f"You are agent {agent.name}. Combine your team's answers above into one answer to "
        "the question, in plain prose, at most six sentences."
    )
    return messages(frame, parts, f"{SYSTEM}\n\n{DECOMPOSER}")
