"""Roles: which model plays which part of a session.

Every call belongs to one role, by what it is for: `debate` (specialists, coordinators,
the integrator), `observer` (flags), `judge` (merges, stub checks, duplicates, an
evaluation's pairs, the ledger), `final` (the final integration) and `map` (the
sections of a long passage). A role may have its own backend, model, endpoint, API-key
variable, sampling, prices and rate limits, so that a strong judge can sit over cheap
debaters or providers can be mixed. What a role leaves unset is the session's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from dagmca.config.sampling import parse_sampling
from dagmca.graph import ModelRole, Strict


class RoleSettings(Strict):
    """What one role changes from the session's settings; None: the session's."""

    llm: Literal["local", "openai", "fake"] | None = Field(
        None, description="Backend of this role (unset: openai when it has a base URL, else the session's)"
    )
    model: str | None = Field(None, description="Model of this role")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint of this role")
    # the *name* of the variable that holds the key: secrets never enter the settings
    api_key_env: str | None = Field(
        None, description="Environment variable holding this role's API key (unset: OPENAI_API_KEY)"
    )
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="Sampling temperature of this role")
    sampling: str | None = Field(None, description="Extra sampling parameters of this role")
    reasoning_effort: Literal["low", "medium", "high"] | None = Field(
        None, description="Reasoning effort of this role's model"
    )
    price_per_1k_prompt: float | None = Field(None, ge=0.0, description="Price of 1,000 prompt tokens, USD")
    price_per_1k_completion: float | None = Field(
        None, ge=0.0, description="Price of 1,000 completion tokens, USD"
    )
    context_window: int | None = Field(
        None, ge=1024, description="Context window of this role's model in tokens (unset: reported or known)"
    )
    rpm: float | None = Field(None, gt=0, description="Requests per minute this role's endpoint allows")
    tpm: float | None = Field(None, gt=0, description="Tokens per minute this role's endpoint allows")

    @field_validator("sampling")
    @classmethod
    def _sampling(cls, value: str | None) -> str | None:
        if value is not None:
            parse_sampling(value)
        return value

    def is_set(self) -> bool:
        return any(v is not None for v in self.model_dump().values())


ROLES = tuple(ModelRole)
