"""The settings of a session, in their groups.

Each group is a model of its own fields; `SessionConfig` (session.py) inherits them all,
so a session's settings stay one flat model at run time (code reads `cfg.cpp`, and a
stored session keeps its settings as one flat JSON object) while files, help panels and
`dagmca config show` arrange them by group. A new setting is one field in its group:
its file key, environment variable and, when it has a `description`, its option and
help text all follow from the field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from dagmca.config.judging import JudgeSettings
from dagmca.config.roles import RoleSettings
from dagmca.graph import ModelRole, Strict

DEFAULT_PERSPECTIVES = (
    "analytical",
    "creative",
    "critical",
    "practical",
    "theoretical",
    "empirical",
    "ethical",
    "systemic",
)
DEFAULT_OBSERVERS = ("dialectical", "skeptical", "pragmatic")


class LLMSettings(Strict):
    """llm: the backend, its endpoint, and the limits of every call."""

    llm: Literal["local", "openai", "fake"] = Field(
        "local",
        description="LLM backend: local (embedded SmolLM2), openai (any OpenAI-compatible endpoint) "
        "or fake (scripted, offline)",
    )
    # empty: the backend's default
    model: str = Field("", description="Model name (openai backend; local uses SmolLM2-135M-Instruct)")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint URL (also OPENAI_BASE_URL)")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature")
    seed: int = Field(0, description="Seed for sampling")
    concurrency: int = Field(4, ge=1, le=64, description="LLM calls in flight at once, for the whole session")
    # one limit for every request the process sends (a build's sessions share it)
    rpm: float | None = Field(
        None, gt=0, description="Requests per minute the endpoint allows; slowed further by 429s"
    )
    tpm: float | None = Field(
        None, gt=0, description="Tokens per minute the endpoint allows (prompt + output)"
    )
    # per call, per try
    request_timeout_s: float = Field(120.0, gt=0, description="Per-call timeout, seconds")
    # tries beyond the first
    max_retries: int = Field(
        5, ge=0, le=20, description="Retries of a call on 429, 5xx, timeouts, disconnects, bad bodies"
    )
    endpoint_down_after: int = Field(8, ge=1, le=10_000)  # failed calls in a row that stop the run
    cache: bool = Field(True, description="Answer repeated requests from the store's response cache")
    # Output caps in tokens. None: what the backend needs. The local 135M model only gets
    # worse and slower with length (64, 120, 2-3x a turn); an endpoint's model is let
    # finish: a turn 600, a flag 300, a synthesis or the final 1,200.
    max_turn_tokens: int | None = Field(
        None, ge=8, le=16_384, description="Output cap of one turn, in tokens; unset: 64 local, 600 else"
    )
    max_flag_tokens: int | None = Field(
        None,
        ge=32,
        le=16_384,
        description="Output cap of an observer's flag, in tokens; unset: 120 local, 300 else",
    )
    max_synthesis_tokens: int | None = Field(
        None,
        ge=16,
        le=32_768,
        description="Output cap of a synthesis and of the final answer, in tokens; "
        "unset: 2-3 turns local, 1200 else",
    )
    # The model's context window, in tokens. None: what the endpoint reports, else a
    # table of known models, else 32,768 (named as an assumption in the summary).
    context_window: int | None = Field(
        None, ge=1024, description="The model's context window in tokens (unset: reported, known or 32768)"
    )
    reasoning_effort: Literal["low", "medium", "high"] | None = Field(
        None, description="Reasoning models: the effort to ask for (passed through as reasoning_effort)"
    )
    # Sampling beyond temperature, sent in every request's body. None: the backend's
    # default (local: the repetition-aware set measured for it; openai: nothing).
    sampling: str | None = Field(
        None,
        description="Extra sampling parameters, e.g. repeat_penalty=1.1,dry_multiplier=0.8, or none "
        "(unset: local's measured set, nothing for openai)",
    )
    local_model: str | None = Field(
        None, description="A GGUF model file for the local backend (unset: the bundled SmolLM2-135M)"
    )
    # OpenTelemetry traces; the standard OTEL_* variables say where and how they are sent
    otel: bool = Field(
        False,
        description="Send OpenTelemetry traces over OTLP/HTTP (also on when OTEL_EXPORTER_OTLP_ENDPOINT "
        "is set); needs the otel extra",
    )
    # off by default: a passage, and so every prompt and reply, may be private
    otel_content: bool = Field(
        False, description="Put prompt and reply text, and tension questions, into the traces' spans"
    )


class InputSettings(Strict):
    """input: the passage, and how much of a prompt it may take."""

    # The share of a prompt's budget the passage may take whole; a longer passage takes
    # the long-passage path (sections, a map, retrieval).
    passage_share: float = Field(0.5, gt=0.0, le=0.9)
    max_passage_bytes: int = Field(200_000, ge=1, description="Largest passage accepted")


class EngineSettings(Strict):
    """engine: the debate protocol and the shape of the agent tree."""

    protocol: Literal["mca", "decompose", "vote", "ensemble"] = Field(
        "mca",
        description="Debate protocol: mca (bottom-up rounds), decompose (the top-down baseline), "
        "vote (MassGen-style answers and votes) or ensemble (independent answers, one vote each)",
    )
    cpp: int = Field(3, ge=1, le=8, description="Children per parent in the agent tree (local model: 2)")
    depth: int = Field(2, ge=1, le=4, description="Levels in the agent tree (1 = a single agent)")
    rounds: int = Field(
        2,
        ge=1,
        le=20,
        description="Maximum rounds per debate (local model: 1). The convergence check compares a round "
        "with the one before, so it can end a debate early only from 3 rounds",
    )
    signals: bool = Field(True, description="Parents send a nudge down each round (local model: off)")
    # embedding: each sentence of the root's output matched to its closest in the last
    # round's, the worst match compared (engines/convergence.py); jaccard: the words of
    # the two outputs, which reworded prose never brings near the threshold
    convergence: Literal["jaccard", "embedding"] = Field(
        "embedding", description="Convergence measure: embedding (no material change) or jaccard"
    )
    # chosen on one half of a labelled set of round pairs, the lowest that stops on no
    # pair with a point added, dropped or a disagreement changed; its false and missed
    # stops are measured on the other half (scripts/calibrate_convergence.py)
    convergence_threshold: float = Field(
        0.73,
        ge=0.0,
        le=1.0,
        description="Stop when no sentence of the root's output changed more than this (from round 2 "
        "on: with --rounds 2 or fewer the check cannot end a debate early)",
    )
    strange_loops: int = Field(
        1, ge=0, le=5, description="Self-reflection passes at the root after the last round (local model: 0)"
    )
    perspectives: tuple[str, ...] = Field(
        DEFAULT_PERSPECTIVES, description="Comma-separated leaf perspectives"
    )
    # second-seed options, off by default
    broadcast: bool = Field(
        False, description="The root states the team's goal before round 1; every prompt carries it"
    )
    self_reflect: bool = Field(
        False, description="Each round every agent rates its output 0-1 and may signal its parent"
    )
    max_iterations: int = Field(
        2, ge=0, le=10, description="Re-broadcasts a debate may make when a critical signal comes up"
    )


class PeersSettings(Strict):
    """peers: the vote and ensemble protocols, whose peers each answer the whole question."""

    agents: int | None = Field(
        None, ge=1, le=32, description="vote, ensemble: agents (unset: as many as the tree's leaves)"
    )
    max_new_answers_per_agent: int = Field(2, ge=0, le=20, description="vote: new answers per agent")
    max_new_answers_total: int | None = Field(
        None, ge=0, description="vote: new answers in all (unset: agents x per agent)"
    )
    fairness_lead: int = Field(
        1, ge=0, le=20, description="vote: answers an agent may get ahead of the slowest"
    )
    # None: no time limit
    agent_timeout_s: float | None = Field(None, gt=0, description="vote: seconds per agent per round")
    max_vote_rounds: int = Field(6, ge=1, le=50, description="vote: rounds after the first answers")
    decision_retries: int = Field(
        2, ge=0, le=5, description="vote, ensemble: re-asks of a mixed or missing decision"
    )
    ensemble_voters: int | None = Field(None, ge=1)  # ensemble: the first N agents vote; None: all


# The affinity router's softmax temperature over success rates in [0, 1]: sharp, so that
# an agent's learned skill decides who is chosen; at 0.5 a rate's lead of a third is a
# weight ratio under 2, and the router staffs almost as randomly as `random` does
# (docs/development/benchmarks.md, the swarm's router temperature).
ROUTER_TEMPERATURE = 0.05


class AgentsSettings(Strict):
    """agents: agents as contexts that keep what they said, and who staffs a branch."""

    agent_context_size: int = Field(
        2, ge=0, le=20, description="Contributions an agent keeps and sees later; 0: none"
    )
    success_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="Cosine at which a contribution survived its debate"
    )
    agent_memory: Literal["store", "session"] = Field(
        "store",
        description="store: agents carry their kept contributions and record from session to session "
        "in the store; session: every session starts them from zero",
    )
    router: Literal["fixed", "affinity", "random", "round-robin", "greedy", "ucb"] = Field(
        "fixed",
        description="Who staffs a branch by tension category: fixed, affinity, random, round-robin, "
        "greedy, ucb",
    )
    router_temperature: float = Field(
        ROUTER_TEMPERATURE,
        gt=0.0,
        le=10.0,
        description="Softmax temperature of the affinity router",
    )


class MonitorSettings(Strict):
    """monitor: the observers that flag tensions in the turns."""

    observers: tuple[str, ...] = Field(DEFAULT_OBSERVERS, description="Comma-separated observer lenses")
    # turn: every observer checks every turn. round: one call per observer per
    # round over the round's turns. auto: round for the embedded CPU model (it makes a
    # default session several times cheaper), turn for every other backend. off: no
    # observer calls.
    monitor_every: Literal["auto", "turn", "round", "off"] = Field(
        "auto",
        description="Observers check each turn, or each round in one call, or off; "
        "auto: round for the local model",
    )
    # joint: a third of the observer calls of per-lens at three lenses (the flags a strong
    # model finds are not fewer: tests/test_real_texts.py); siblings: a third again at three
    # children per parent; per-lens: one call per lens per turn
    observer_calls: Literal["siblings", "joint", "per-lens"] = Field(
        "siblings",
        description="With observers checking each turn: one call for every lens on a phase's "
        "sibling turns (siblings), on each turn (joint), or one call per lens per turn (per-lens)",
    )
    urgency_threshold: float = Field(0.3, ge=0.0, le=1.0, description="Drop flags below this urgency")
    # a flag is about what its turn says: one whose excerpt the turn does not contain is
    # dropped. The bundled 135M model seldom quotes word for word, so for it alone the
    # turn's sentence nearest the flag stands in, marked on the Tension (excerpt_located)
    unquoted_excerpts: Literal["drop", "locate"] = Field(
        "drop",
        description="A flag whose excerpt is not in its turn: drop it, or put the turn's nearest "
        "sentence in its place, marked (locate: the bundled model's default)",
    )


class BranchesSettings(Strict):
    """branches: which tensions become branches, how deep, and the ledger of open stubs."""

    strategy: Literal["diverse", "urgent", "deep", "meta"] = Field(
        "diverse", description="Selection strategy: diverse, urgent, deep or meta"
    )
    max_branches: int = Field(3, ge=0, le=16, description="Branches per node (local model: 1)")
    max_depth: int = Field(1, ge=0, le=6, description="Maximum branch depth (0 = main debate only)")
    max_revisits: int = Field(
        1, ge=0, le=32, description="Stubs that may be explored when they become relevant (local model: 0)"
    )
    max_nodes: int | None = Field(
        None, ge=10, description="Cap on the session's nodes: no branch starts that would pass it"
    )
    final_stubs: int = Field(
        5, ge=0, le=50, title="Open stubs the final integration names, most urgent first"
    )
    # the ledger's size: a debate of 9 agents x 3 rounds flags ~80 tensions per lens, and
    # every open stub is a judge call each time a new text arrives
    max_open_stubs: int = Field(
        10,
        ge=1,
        le=10_000,
        description="Open stubs a debate keeps; a less urgent one past it is dropped (kept in the "
        "graph as dropped, with its reason)",
    )


class BudgetSettings(Strict):
    """budget: caps on what a session spends (None: unbounded), and the prices it counts in."""

    max_llm_calls: int | None = Field(None, ge=1, description="Budget: LLM calls")
    max_tokens: int | None = Field(None, ge=1, description="Budget: tokens")
    max_cost_usd: float | None = Field(
        None, gt=0, description="Budget: cost in USD, from the model's known prices or the price flags"
    )
    # None: the model's price from the table in dagmca/llm/prices.py
    price_per_1k_prompt: float | None = Field(
        None, ge=0.0, description="Price of 1,000 prompt tokens, USD (default: the model's known price)"
    )
    price_per_1k_completion: float | None = Field(
        None, ge=0.0, description="Price of 1,000 completion tokens, USD (default: the model's known price)"
    )


class RolesSettings(Strict):
    """roles: what a role sets overrides the settings of the other groups for its calls only."""

    roles: dict[ModelRole, RoleSettings] = Field(default_factory=dict)


# The groups in the order files, help panels and `config show` list them, each with its
# help panel's title.
GROUPS: dict[str, tuple[type[BaseModel], str]] = {
    "llm": (LLMSettings, "LLM"),
    "engine": (EngineSettings, "Engine"),
    "peers": (PeersSettings, "Peers (vote, ensemble)"),
    "agents": (AgentsSettings, "Agents"),
    "monitor": (MonitorSettings, "Monitor"),
    "branches": (BranchesSettings, "Branches and stubs"),
    "judge": (JudgeSettings, "Judge"),
    "budget": (BudgetSettings, "Budget"),
    "input": (InputSettings, "Input"),
    "roles": (RolesSettings, "Roles"),
}
GROUP_OF = {field: group for group, (model, _) in GROUPS.items() for field in model.model_fields}
