"""Every setting of a session, with its default.

Settings are resolved once, at the CLI entry point: flag > DAGMCA_* environment >
default. Secrets (API keys, passwords) are never part of this model, so they can
never reach the Session node, the reports or an export.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    from dagmca.debate.agents import AgentTree

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
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 _-]{0,39}$")


class SessionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # LLM
    llm: Literal["local", "openai", "fake"] = "local"
    model: str = ""  # empty: the backend's default
    base_url: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int = 0
    concurrency: int = Field(4, ge=1, le=64)
    request_timeout_s: float = Field(120.0, gt=0)  # per call (per try)
    max_retries: int = Field(5, ge=0, le=20)  # tries beyond the first, on 429/5xx/timeouts/...
    endpoint_down_after: int = Field(8, ge=1, le=10_000)  # failed calls in a row that stop the run
    cache: bool = True  # answer repeated requests from the store's response cache
    # None: 64 for the local model (it only gets worse and slower with length), 256 else.
    max_turn_tokens: int | None = Field(None, ge=8, le=8192)
    max_flag_tokens: int = Field(120, ge=32, le=4096)
    max_prompt_chars: int = Field(6000, ge=500)
    passage_prompt_chars: int = Field(1800, ge=200)

    # MCA engine (DESIGN §2)
    # mca: the bottom-up rounds; decompose: the top-down baseline (one pass);
    # vote: MassGen-style answers and votes; ensemble: independent answers, one vote each
    protocol: Literal["mca", "decompose", "vote", "ensemble"] = "mca"
    cpp: int = Field(3, ge=1, le=8)
    depth: int = Field(2, ge=1, le=4)
    rounds: int = Field(2, ge=1, le=20)
    signals: bool = True
    convergence: Literal["jaccard", "embedding"] = "jaccard"
    convergence_threshold: float = Field(0.85, ge=0.0, le=1.0)
    strange_loops: int = Field(1, ge=0, le=5)
    perspectives: tuple[str, ...] = DEFAULT_PERSPECTIVES
    # second-seed options, off by default
    broadcast: bool = False  # the root states the team's goal before round 1
    self_reflect: bool = False  # every agent rates its output 0-1 each round and may signal up
    max_iterations: int = Field(2, ge=0, le=10)  # re-broadcasts a debate may make on critical signals

    # vote and ensemble (DESIGN §2): peers answering the whole question
    agents: int | None = Field(None, ge=1, le=32)  # None: as many as the tree's leaves
    max_new_answers_per_agent: int = Field(2, ge=0, le=20)
    max_new_answers_total: int | None = Field(None, ge=0)  # None: agents x the per-agent cap
    fairness_lead: int = Field(1, ge=0, le=20)  # answers an agent may get ahead of the slowest
    agent_timeout_s: float | None = Field(None, gt=0)  # per agent per vote round; None: none
    max_vote_rounds: int = Field(6, ge=1, le=50)
    decision_retries: int = Field(2, ge=0, le=5)  # re-asks of a mixed or missing decision
    ensemble_voters: int | None = Field(None, ge=1)  # ensemble: the first N agents vote; None: all

    # agents as contexts (DESIGN §3)
    agent_context_size: int = Field(2, ge=0, le=20)  # an agent's kept contributions; 0: none
    success_threshold: float = Field(0.5, ge=0.0, le=1.0)  # survival into a resolution (cosine)
    router: Literal["fixed", "affinity", "random", "round-robin", "greedy", "ucb"] = "fixed"
    router_temperature: float = Field(0.5, gt=0.0, le=10.0)

    # monitoring and selection (DESIGN §1)
    observers: tuple[str, ...] = DEFAULT_OBSERVERS
    # turn: every observer checks every turn (DESIGN). round: one call per observer per
    # round over the round's turns. auto: round for the embedded CPU model (it makes a
    # default session several times cheaper), turn for every other backend.
    monitor_every: Literal["auto", "turn", "round", "off"] = "auto"  # off: no observer calls
    urgency_threshold: float = Field(0.3, ge=0.0, le=1.0)
    duplicate_threshold: float = Field(0.9, ge=0.0, le=1.0)
    strategy: Literal["diverse", "urgent", "deep", "meta"] = "diverse"
    max_branches: int = Field(3, ge=0, le=16)
    max_depth: int = Field(1, ge=0, le=6)

    # merging, relations and stubs
    merge_threshold: float = Field(0.7, ge=0.0, le=1.0)
    relation_threshold: float = Field(0.5, ge=0.0, le=1.0)
    # A pair merges only when it is also this much more alike than two texts of the
    # same run usually are (the run's own baseline; small models make everything alike).
    merge_margin: float = Field(0.1, ge=0.0, le=1.0)
    classify_relations: bool = True  # ask the LLM: contradicts or elaborates
    reference_threshold: float = Field(0.75, ge=0.0, le=1.0)
    supersede_threshold: float = Field(0.65, ge=0.0, le=1.0)
    revisit_threshold: float = Field(0.5, ge=0.0, le=1.0)
    max_revisits: int = Field(1, ge=0, le=32)
    max_nodes: int | None = Field(None, ge=10)  # no branch starts that would take the session past it
    final_stubs: int = Field(5, ge=0, le=50)

    # budgets (None: unbounded)
    max_llm_calls: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    max_cost_usd: float | None = Field(None, gt=0)
    price_per_1k_prompt: float = Field(0.0, ge=0.0)
    price_per_1k_completion: float = Field(0.0, ge=0.0)

    # input
    max_passage_bytes: int = Field(200_000, ge=1)

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
        return 64 if self.llm == "local" else 256

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
        from dagmca.debate.agents import build_tree

        views = perspectives or self.perspectives
        if self.protocol in ("vote", "ensemble"):
            return build_tree(self.peer_count(), 2, views)
        return build_tree(self.cpp, self.depth, views)

    def leaf_count(self) -> int:
        return self.peer_count() if self.protocol in ("vote", "ensemble") else self.cpp ** (self.depth - 1)

    def peer_count(self) -> int:
        """Agents of the vote and ensemble protocols."""
        return self.agents if self.agents is not None else self.cpp ** (self.depth - 1)
