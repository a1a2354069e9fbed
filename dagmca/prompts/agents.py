"""Prompts of the debating agents: one competency prompt per role,
and one builder per phase of the MCA rounds, its second-seed options and the
top-down baseline. Each returns a Prompt fitted to the budget; each tells the agent
what to write and how long, the length following from the call's output cap."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.graph import Role
from dagmca.prompts.budget import Part, Prompt, PromptBudget
from dagmca.prompts.lines import ANSWER_LINES, FORMAT_MIN_TOKENS, PARTS_FORMAT, STANCE_LINE
from dagmca.prompts.templates import Frame, messages, quote
from dagmca.team import Agent

# Per role, not per perspective. It follows the passage (templates.messages), so a
# server's prefix cache serves the passage to every role alike.
COMPETENCY = {
    Role.SPECIALIST: (
        "You are a specialist in a research team. You are not assigned a subtask: you analyse "
        "the whole question through your own perspective and contribute the most valuable "
        "insight you can from it, grounded in the passage. With peers you keep your "
        "perspective while integrating what they add. Be substantive: claims with their "
        "reasons, no filler."
    ),
    Role.COORDINATOR: (
        "You are a coordinator in a research team. You observe the specialists below you and "
        "name what emerges from the combination of their views that none of them said "
        "alone: patterns, contradictions, synergies, gaps. You never assign tasks or tell "
        "anyone what to do; you observe and synthesize."
    ),
    Role.INTEGRATOR: (
        "You are the lead integrator of a research team. You read what emerged below you and "
        "form a coherent, holistic answer that keeps the best emergent insights and says "
        "what remains contested. You do not direct the process; you make sense of it."
    ),
}
DECOMPOSER = (
    "You lead a team top-down: you split a question into one subtask per member, and later "
    "combine their answers into one."
)

# What each default perspective attends to: a specialist is told its lens, not a word.
PERSPECTIVES = {
    "analytical": "you take the argument apart into its claims, premises and inferences, and test "
    "whether each step holds",
    "creative": "you look for reframings, analogies and possibilities the passage does not consider",
    "critical": "you look for weaknesses, counterexamples, hidden costs and what the passage leaves out",
    "practical": "you ask what would happen if it were acted on: who does what, at what cost, "
    "against which obstacles",
    "theoretical": "you place the argument in the frameworks and traditions it draws on or contradicts",
    "empirical": "you ask what evidence supports each claim, what evidence would test it, and what "
    "is actually known",
    "ethical": "you weigh who gains and who bears the costs, the rights and duties at stake, and "
    "what fairness asks",
    "systemic": "you trace feedback loops, second-order effects and how the parts interact over time",
}

CRITICAL_SIGNALS = ("goal_mismatch", "needs_reframing", "contradiction_detected")

# Peers agreeing is social pressure, not evidence: agents that change for it move from
# right answers to wrong ones as often as the reverse. Every prompt that shows an agent
# another agent's answer carries it (a coordinator or the root siding with the most held
# answer is the same pressure one level up).
AGAINST_CONFORMITY = (
    "Agreement is no reason to change a view or to take one: that others hold it, or that "
    "most do, is not an argument. Move only for an argument or a passage sentence you can name."
)


def perspective(name: str) -> str:
    """A perspective as an agent is told it."""
    lens = PERSPECTIVES.get(name)
    return f"the {name} perspective ({lens})" if lens else f"the {name} perspective"


def role_for(agent: Agent, single: bool = False) -> str:
    """The role's competency prompt, which every prompt of the agent carries."""
    role = Role.SPECIALIST if single else agent.role
    return f"Your role: {COMPETENCY[role]}"


def _who(agent: Agent, single: bool = False) -> str:
    if single or agent.role is Role.SPECIALIST:
        return f"You are agent {agent.name}, speaking from {perspective(agent.perspective)}."
    return f"You are agent {agent.name}."


def _length(frame: Frame) -> str:
    return PromptBudget.prose(frame.budget.turn)


def _format(frame: Frame, line: str) -> str:
    """`line` (a format to follow), when the reply's cap leaves room for it."""
    return f" {line}" if frame.budget.turn >= FORMAT_MIN_TOKENS else ""


def _agent_prompt(agent: Agent, frame: Frame, parts: list[Part], goal: str, single: bool = False) -> Prompt:
    if goal:  # --broadcast: the team's goal replaces the bare question as what to aim at
        parts.insert(0, quote("The team's goal, as your integrator states it", goal))
    return messages(frame, parts, frame.budget.turn, role_for(agent, single))


def kept_parts(kept: Sequence[str]) -> list[Part]:
    """An agent's context: what it contributed before that the group kept."""
    return [quote("An earlier contribution of yours that the group kept", k) for k in kept]


def respond(
    agent: Agent,
    frame: Frame,
    previous: str = "",
    signal: str = "",
    single: bool = False,
    goal: str = "",
    kept: Sequence[str] = (),
    discussion: str = "",
    answer: bool = False,
) -> Prompt:
    """A leaf's response; in later rounds with its previous response and `discussion`,
    what its coordinator made of the last round (the discussion it is asked to weigh).
    `answer`: a question session's turn ends with its answer and confidence."""
    parts = kept_parts(kept)
    if previous:
        parts.append(quote("Your previous response", previous))
    if discussion:
        parts.append(quote("Your coordinator's synthesis of the last round's discussion", discussion))
    if signal:
        parts.append(quote("A nudge from your coordinator (you may ignore it)", signal))
    ask = (
        "Give your analysis of the question: your main points, each with its reason and where "
        "the passage supports or undercuts it."
        if not previous
        else "Give your updated analysis: keep what still holds, change what the discussion "
        f"showed wrong. {AGAINST_CONFORMITY}"
    )
    tail = f" {ANSWER_LINES}" if answer else ""
    parts.append(f"{_who(agent, single)} {ask} {_length(frame)}{tail}")
    return _agent_prompt(agent, frame, parts, goal, single)


def lateral(
    agent: Agent,
    frame: Frame,
    own: str,
    siblings: Sequence[tuple[Agent, str]],
    goal: str = "",
    answer: bool = False,
) -> Prompt:
    parts: list[Part] = [quote("Your response", own)]
    for sib, text in siblings:
        parts.append(quote(f"{sib.name} ({sib.perspective})", text))
    tail = f" {ANSWER_LINES}" if answer else ""
    parts.append(
        f"{_who(agent)} Your peers answered too. Keep your own perspective; name where you "
        "disagree and why, fill what they missed, and revise where an argument of theirs "
        f"improves your answer. {AGAINST_CONFORMITY} If nothing should change, repeat your "
        f"response. {_length(frame)}{_format(frame, STANCE_LINE)}{tail}"
    )
    return _agent_prompt(agent, frame, parts, goal)


def observe(
    agent: Agent,
    frame: Frame,
    children: Sequence[tuple[Agent, str]],
    previous: str = "",
    goal: str = "",
    positions: str = "",
) -> Prompt:
    """A coordinator's synthesis of its children; the root's is written in parts.
    `positions`: in a question session, the specialists' answers this round, each with
    who holds it and their reasons (lines.positions): never a count to side with."""
    parts: list[Part] = [quote(f"{child.name} ({child.perspective})", text) for child, text in children]
    if previous:
        parts.append(quote("Your previous synthesis", previous))
    if positions:
        held = "The specialists' answers this round, each with the reasons its holders gave"
        parts.append(quote(held, positions))
    ask = (
        f"{_who(agent)} What emerges from these together that none of them said alone? For "
        "each such point, name the agents whose points it combines (as L1N2 and L1N3). Where "
        "do they contradict each other (name who holds which side), and what is missing? "
        "Write the synthesis, not a summary of each; claim nothing that none of them or the "
        f"passage supports. {AGAINST_CONFORMITY} {_length(frame)}"
    )
    if agent.parent is None:
        ask += _format(frame, PARTS_FORMAT)
    parts.append(ask)
    return _agent_prompt(agent, frame, parts, goal)


def signal(agent: Agent, frame: Frame, own: str, goal: str = "") -> Prompt:
    parts: list[Part] = [
        quote("Your current synthesis", own),
        f"{_who(agent)} Write a 2-3 sentence nudge to the agents below you for the next "
        "round: blind spots, tensions worth developing. Suggest, do not direct.",
    ]
    return _agent_prompt(agent, frame, parts, goal)


def strange_loop(
    agent: Agent,
    frame: Frame,
    own: str,
    goal: str = "",
    children: Sequence[tuple[Agent, str]] = (),
    flags: Sequence[str] = (),
) -> Prompt:
    """The root reflects on its integrated answer against what its children said and
    the tensions the observers flagged in the debate; it may leave the answer as it is."""
    parts: list[Part] = [quote(f"{child.name} ({child.perspective})", text) for child, text in children]
    parts += [quote("A tension the observers flagged in this debate", f) for f in flags]
    parts.append(quote("Your integrated answer", own))
    parts.append(
        f"{_who(agent)} Check your integrated answer against what the agents below you "
        "said and the flagged tensions: what did you miss or misstate, where are you "
        "overconfident? If it stands as it is, reply 'Unchanged:' and one sentence on why. "
        "Otherwise write the improved final answer. Keep every disagreement it lists: "
        "you may add one, never drop or settle one. Add no claim that the agents or the "
        f"passage do not support. {AGAINST_CONFORMITY} {_length(frame)}{_format(frame, PARTS_FORMAT)}"
    )
    return _agent_prompt(agent, frame, parts, goal)


# -- second-seed options -------------------------------------------------------------
def broadcast(agent: Agent, frame: Frame, reason: str = "", previous_goal: str = "") -> Prompt:
    """The goal broadcast (--broadcast), or a re-broadcast after a critical signal from below."""
    parts: list[Part] = []
    if previous_goal:
        parts.append(quote("The goal you stated before", previous_goal))
    if reason:
        parts.append(quote("Signals from your team", reason))
        ask = "Restate the goal for your team so it answers these signals"
    else:
        ask = "State the goal for your team: what a good answer to the question must achieve"
    parts.append(f"You are agent {agent.name}. {ask}, in 2-3 sentences. Do not answer the question.")
    return messages(frame, parts, frame.budget.turn, role_for(agent))


def reflect(agent: Agent, frame: Frame, own: str, goal: str = "") -> Prompt:
    parts: list[Part] = [
        quote("Your latest output", own),
        f"You are agent {agent.name}. Judge your latest output against the question"
        f"{' and the goal' if goal else ''}. Reply with one JSON object: satisfaction from 0 "
        "(useless) to 1 (fully satisfied); signal: none, or what your parent should know "
        "(unexpected_finding, goal_mismatch, needs_reframing, contradiction_detected, "
        "resource_request); note: one sentence why.",
    ]
    return _agent_prompt(agent, frame, parts, goal)


# -- the top-down baseline (--protocol decompose) ---------------------------------------
def decompose(agent: Agent, frame: Frame, task: str, parts_count: int) -> Prompt:
    parts: list[Part] = [
        quote("Your task", task),
        f"You are agent {agent.name}. Split this task into exactly {parts_count} subtasks, one "
        "per member of your team, together covering it. Reply with one JSON object: subtasks, "
        "a list of one-sentence subtasks.",
    ]
    return messages(frame, parts, frame.budget.turn, f"Your role: {DECOMPOSER}")


def answer_subtask(agent: Agent, frame: Frame, subtask: str) -> Prompt:
    parts: list[Part] = [
        quote("Your subtask", subtask),
        f"You are agent {agent.name}. Answer your subtask only. {_length(frame)}",
    ]
    return messages(frame, parts, frame.budget.turn)


def synthesize_answers(agent: Agent, frame: Frame, answers: Sequence[tuple[str, str, str]]) -> Prompt:
    """The root's one synthesis of every leaf's answer: (agent, subtask, answer)."""
    parts: list[Part] = [quote(f"{name} on: {subtask}", text) for name, subtask, text in answers]
    parts.append(
        f"You are agent {agent.name}. Combine your team's answers above into one answer to "
        f"the question. {AGAINST_CONFORMITY} {_length(frame)}"
    )
    return messages(frame, parts, frame.budget.turn, f"Your role: {DECOMPOSER}")
