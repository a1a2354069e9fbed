"""Every setting of a session, with its default.

Settings are resolved once, at the CLI entry point: flag > DAGMCA_* environment >
default. Secrets (API keys, passwords) are never part of this model, so they can
never reach the Session node, the reports or an export.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from dagmca.config.roles import RoleSettings
from dagmca.config.sampling import parse_sampling
from dagmca.models import ModelRole, Strict
from dagmca.team import AgentTree, build_tree

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
# settings of earlier versions: character clips (replaced by token budgets), and the
# similarity-only decisions the judge replaced
RETIRED = frozenset(
    {
        "max_prompt_chars",
        "passage_prompt_chars",
        "relation_threshold",
        "merge_margin",
        "classify_relations",
        "supersede_threshold",
    }
)
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 _-]{0,39}$")


class SessionConfig(Strict):
    """Every setting of a session. A field with a `description` is a command-line option
    (`--name`, `DAGMCA_NAME`); the description is its help text (`dagmca/cli/options.py`)."""

    # LLM
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
    # The share of a prompt's budget the passage may take whole; a longer passage takes
    # the long-passage path (sections, a map, retrieval).
    passage_share: float = Field(0.5, gt=0.0, le=0.9)
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

    # MCA engine
    protocol: Literal["mca", "decompose", "vote", "ensemble"] = Field(
        "mca",
        description="Debate protocol: mca (bottom-up rounds), decompose (the top-down baseline), "
        "vote (MassGen-style answers and votes) or ensemble (independent answers, one vote each)",
    )
    cpp: int = Field(3, ge=1, le=8, description="Children per parent in the agent tree")
    depth: int = Field(2, ge=1, le=4, description="Levels in the agent tree (1 = a single agent)")
    rounds: int = Field(2, ge=1, le=20, description="Maximum rounds per debate")
    signals: bool = Field(True, description="Parents send a nudge down each round")
    convergence: Literal["jaccard", "embedding"] = Field(
        "jaccard", description="Convergence measure: jaccard or embedding"
    )
    convergence_threshold: float = Field(
        0.85, ge=0.0, le=1.0, description="Stop when root outputs are this similar"
    )
    strange_loops: int = Field(
        1, ge=0, le=5, description="Self-reflection passes at the root after the last round"
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

    # vote and ensemble: peers answering the whole question
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

    # agents as contexts
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
        0.5, gt=0.0, le=10.0, description="Softmax temperature of the affinity router"
    )

    # monitoring and selection
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
    # the lowest cosine that merges no pair of different questions in the labelled set
    # (scripts/calibrate_duplicates.py): embeddings cannot tell a paraphrase from another
    # question in the same words, so only near-restatements merge
    duplicate_threshold: float = Field(0.95, ge=0.0, le=1.0)
    # Across the session, when a level of debates is done, each new open stub's most
    # similar earlier open stub is a candidate from this cosine, and the judge decides:
    # 0.6 keeps 89% of the labelled paraphrases (scripts/calibrate_duplicates.py)
    duplicate_prefilter: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Cosine of two open stubs' questions from which the judge checks whether they ask "
        "the same (1 turns it off; with --judge embedding, the duplicate threshold 0.95 decides)",
    )
    strategy: Literal["diverse", "urgent", "deep", "meta"] = Field(
        "diverse", description="Selection strategy: diverse, urgent, deep or meta"
    )
    max_branches: int = Field(3, ge=0, le=16, description="Branches per node")
    max_depth: int = Field(1, ge=0, le=6, description="Maximum branch depth (0 = main debate only)")

    # merging, relations and stubs: an embedding prefilter picks candidates, the judge
    # decides (the thresholds come from scripts/calibrate_judge.py; README "Decisions")
    judge: Literal["llm", "embedding"] = Field(
        "llm",
        description="Who decides merges, relations and stub revisits: llm (a judge with a recorded "
        "verdict and reason) or embedding (similarity alone, for budget runs)",
    )
    pair_prefilter: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Cosine of two branches' resolutions from which the judge compares them",
    )
    stub_prefilter: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Cosine of a stub's question and a new text from which the judge checks it",
    )
    merge_threshold: float = Field(
        0.7, ge=0.0, le=1.0, description="With --judge embedding: cosine from which finished branches merge"
    )
    revisit_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="With --judge embedding: cosine from which a stub is explored again"
    )
    reference_threshold: float = Field(0.75, ge=0.0, le=1.0)
    max_revisits: int = Field(
        1, ge=0, le=32, description="Stubs that may be explored when they become relevant"
    )
    max_nodes: int | None = Field(
        None, ge=10, description="Cap on the session's nodes: no branch starts that would pass it"
    )
    final_stubs: int = Field(5, ge=0, le=50)
    # the ledger's size: a debate of 9 agents x 3 rounds flags ~80 tensions per lens, and
    # every open stub is a judge call each time a new text arrives
    max_open_stubs: int = Field(
        10,
        ge=1,
        le=10_000,
        description="Open stubs a debate keeps; a less urgent one past it is dropped (kept in the "
        "graph with status dropped and its reason, and counted)",
    )
    max_stub_checks: int = Field(
        8,
        ge=0,
        le=10_000,
        description="Open stubs the judge checks against each new text: the most similar past the "
        "prefilter; the rest stay open, recorded as not judged",
    )

    # budgets (None: unbounded)
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

    # input
    max_passage_bytes: int = Field(200_000, ge=1, description="Largest passage accepted")

    # roles: what a role sets overrides the settings above for its calls only
    roles: dict[ModelRole, RoleSettings] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        """Settings of earlier versions, dropped so their stored sessions still load."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in RETIRED}
        return data

    @field_validator("sampling")
    @classmethod
    def _sampling(cls, value: str | None) -> str | None:
        if value is not None:
            parse_sampling(value)
        return value

    def role(self, role: ModelRole) -> SessionConfig:
        """The settings of `role`'s calls: the session's, with what the role sets on top.
        A role that names an endpoint and no backend is on an OpenAI-compatible one."""
        own = self.roles.get(role)
        if own is None or not own.is_set():
            return self
        changes = {k: v for k, v in own.model_dump().items() if v is not None and k != "api_key_env"}
        if own.base_url is not None and own.llm is None:
            changes["llm"] = "openai"
        return self.model_copy(update={**changes, "roles": {}})

    def distinct_roles(self) -> dict[ModelRole, SessionConfig]:
        """Every role's settings (a role not set has the session's)."""
        return {role: self.role(role) for role in ModelRole}

    def sampling_params(self) -> dict[str, float] | None:
        """The --sampling setting as request parameters; None: the backend's default."""
        return None if self.sampling is None else parse_sampling(self.sampling)

    @field_validator("perspectives", "observers")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """A comma-separated list of plain names: 'analytical,critical'. Anything else
        (empty items, brackets, quotes, other separators) is a format mistake, not a name."""
        names = tuple(v.strip() for v in value)
        if not names or names == ("",):
            raise ValueError("needs at least one name")
        for name in names:
            if not NAME.match(name):
                raise ValueError(
                    f"{name!r} is not a name; give comma-separated names like analytical,critical"
                )
        if len(set(names)) != len(names):
            raise ValueError("names repeat")
        return names

    def turn_tokens(self) -> int:
        if self.max_turn_tokens is not None:
            return self.max_turn_tokens
        return 64 if self.llm == "local" else 600

    def flag_tokens(self) -> int:
        if self.max_flag_tokens is not None:
            return self.max_flag_tokens
        return 120 if self.llm == "local" else 300

    def synthesis_tokens(self) -> int:
        """A synthesis's cap (the final answer's: `final_tokens`)."""
        if self.max_synthesis_tokens is not None:
            return self.max_synthesis_tokens
        return 2 * self.turn_tokens() if self.llm == "local" else 1200

    def final_tokens(self) -> int:
        if self.max_synthesis_tokens is not None:
            return self.max_synthesis_tokens
        return 3 * self.turn_tokens() if self.llm == "local" else 1200

    def monitor_mode(self) -> Literal["turn", "round", "off"]:
        if self.monitor_every == "auto":
            return "round" if self.llm == "local" else "turn"
        return self.monitor_every

    def per_round_calls(self) -> int:
        """Calls in one round of the protocol (the seed's cost tables), before any
        re-broadcast; a decompose debate is one round."""
        tree = self.tree()
        if self.protocol == "decompose":
            return tree.legacy_calls()
        if self.protocol in ("vote", "ensemble"):
            return self.peer_count()
        return tree.calls_per_round(self.signals, self.self_reflect)

    def tree(self, perspectives: tuple[str, ...] | None = None) -> AgentTree:
        """The agents of this protocol: the MCA tree, or a flat team of peers under a
        root that only holds them together (vote, ensemble). `perspectives` staffs the
        leaves in order (a routed branch); by default leaf n gets (n-1) % count."""
        views = perspectives or self.perspectives
        if self.protocol in ("vote", "ensemble"):
            return build_tree(self.peer_count(), 2, views)
        return build_tree(self.cpp, self.depth, views)

    def leaf_count(self) -> int:
        return self.peer_count() if self.protocol in ("vote", "ensemble") else self.cpp ** (self.depth - 1)

    def peer_count(self) -> int:
        """Agents of the vote and ensemble protocols."""
        return self.agents if self.agents is not None else self.cpp ** (self.depth - 1)
