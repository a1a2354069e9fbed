"""Every setting of a session, with its default, as one flat model.

The fields are declared by group in groups.py; `SessionConfig` inherits every group,
so code reads `cfg.cpp` and a stored session's flat JSON settings load as they were
written. Where a value comes from (flag, environment, profile, file, default) is
resolved in sources.py. Secrets (API keys, passwords) are never part of this model,
so they can never reach the Session node, the reports or an export.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import field_validator, model_validator

from dagmca.config.groups import (
    AgentsSettings,
    BranchesSettings,
    BudgetSettings,
    EngineSettings,
    InputSettings,
    LLMSettings,
    MonitorSettings,
    PeersSettings,
    RolesSettings,
)
from dagmca.config.judging import JudgeSettings
from dagmca.config.sampling import parse_sampling
from dagmca.graph import ModelRole
from dagmca.team import AgentTree, build_tree

# the settings that cap a session's spend (BudgetSettings' caps), by name
BUDGETS = ("max_llm_calls", "max_tokens", "max_cost_usd")

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
# The embedded CPU model's defaults where they differ from an endpoint's, for the
# settings no source gave. The local model is for trying the tool on a small machine:
# a smaller session still runs every phase (a main debate whose agents answer, revise
# against each other and are integrated; the observers' tensions; branches; the judge's
# checks; the final answer) in a few minutes, where the endpoint defaults take many
# times longer for text no better from a 135M model. With one round a parent's nudge
# for the next round has no reader, and a strange loop is a turn more for the observers
# to check. One branch: the model's branches share its one CPU, so each more branch adds
# its whole time to the run's, and a second one with its merge doubles the run without
# showing a phase the first did not. docs/guides/local-models.md lists them.
LOCAL_DEFAULTS: dict[str, Any] = {
    "cpp": 2,
    "rounds": 1,
    "signals": False,
    "strange_loops": 0,
    "max_branches": 1,
    "max_revisits": 0,
    "max_stub_checks": 3,
}


# pydantic collects inherited fields from the last base to the first: the bases are
# listed in reverse so that the fields keep the groups' order (llm first)
class SessionConfig(
    RolesSettings,
    InputSettings,
    BudgetSettings,
    JudgeSettings,
    BranchesSettings,
    MonitorSettings,
    AgentsSettings,
    PeersSettings,
    EngineSettings,
    LLMSettings,
):
    """Every setting of a session. A field with a `description` is a command-line option
    (`--name`, `DAGMCA_NAME`); the description is its help text (`dagmca/cli/options.py`)."""

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        """Settings of earlier versions, dropped so their stored sessions still load."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in RETIRED}
        return data

    @model_validator(mode="before")
    @classmethod
    def _local_defaults(cls, data: Any) -> Any:
        """The local model's own defaults (LOCAL_DEFAULTS) for what `data` leaves unset."""
        if isinstance(data, dict) and data.get("llm", "local") == "local":
            # the bundled model's concession, not a user's own GGUF (--local-model)
            bundled = {"unquoted_excerpts": "locate"} if not data.get("local_model") else {}
            return {**LOCAL_DEFAULTS, **bundled, **data}
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
        # the bundled model's short cap holds because its decision comes first; a model
        # of the user's own (--local-model) writes its evidence first and needs room
        return 120 if self.llm == "local" and not self.local_model else 300

    def synthesis_tokens(self) -> int:
        """A synthesis's cap (the final answer's: `final_tokens`)."""
        if self.max_synthesis_tokens is not None:
            return self.max_synthesis_tokens
        return 2 * self.turn_tokens() if self.llm == "local" else 1200

    def final_tokens(self) -> int:
        if self.max_synthesis_tokens is not None:
            return self.max_synthesis_tokens
        return 3 * self.turn_tokens() if self.llm == "local" else 1200

    def ledger_mode(self) -> Literal["off", "final", "all"]:
        """Which texts the emergence ledger traces (the `ledger` setting, `auto` resolved)."""
        if self.ledger == "auto":
            return "off" if self.llm == "local" else "final"
        return self.ledger

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
