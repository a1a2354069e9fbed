"""How a swarm runs, beside its settings: `SwarmOptions`, one object that `dagmca swarm`
builds from its options (each field is one, its description the help) and
`Workspace.swarm` takes, so the command and the API have one default, one bound and one
check per option. The affinity router's temperature is the session setting
`router_temperature`, as the debate's router reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, Field, field_validator

from dagmca.graph.schema import Strict
from dagmca.swarm.routers import ROUTERS, parse_routers

if TYPE_CHECKING:
    from dagmca.swarm.agents import ContextOptions


class SwarmOptions(Strict):
    """The routers a swarm compares, its pool, its repeats and snapshots, what an agent's
    prompt holds, and where the routers' records start."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    router: str = Field(
        "affinity", description=f"{', '.join(ROUTERS)}, or a comma list to compare on the same stream"
    )
    agents: int = Field(4, ge=2, le=64, description="Agents in the pool")
    repeats: int = Field(1, ge=1, description="Runs per router, seeded apart")
    snapshot_every: int = Field(20, ge=1, description="S, D and F every M tasks")
    context_examples: int = Field(4, ge=0, description="Solved examples in a prompt, at most")
    context_tokens: int = Field(1500, ge=0, description="Tokens of examples in a prompt, at most")
    negatives: int = Field(0, ge=0, description="Failed examples shown too")
    weighting: Literal["type", "recency"] = Field(
        "type", description="type: same type first; recency: newest first"
    )
    memory: Literal["none", "store"] = Field(
        "none",
        description="store: routers start from the persistent agents' records by type (debates' and "
        "earlier swarms'); none: from nothing, so routers compare on equal terms",
    )
    unsafe_executor: bool = Field(
        False,
        description="Run code tasks even where bubblewrap cannot start (the code then has no walls but its "
        "resource limits)",
    )

    @field_validator("router")
    @classmethod
    def _known(cls, value: str) -> str:
        parse_routers(value)  # an unknown or repeated router is a UserError, raised as it is
        return value

    @property
    def routers(self) -> list[str]:
        return parse_routers(self.router)

    @property
    def context(self) -> ContextOptions:
        # imported here: the command's options load without the swarm's agents
        from dagmca.swarm.agents import ContextOptions

        return ContextOptions(
            examples=self.context_examples,
            max_tokens=self.context_tokens,
            negatives=self.negatives,
            weighting=self.weighting,
        )
