"""An LLM call as the store accounts it."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from dagmca.graph.schema import Strict, utcnow


class CallRecord(Strict):
    """One LLM call as the store accounts it. Not a graph node: kept beside
    the graph (SQLite table `llm_calls`, Neo4j label `LLMCall` without `Node`)."""

    session: str
    agent: str = ""
    debate: str = ""
    phase: str = ""
    model: str = ""  # the model that served the call
    role: str = ""  # the ModelRole the call was made for; "" in records older than roles
    key: str = ""  # the cache key of the request
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens the server's own prompt cache served
    latency_s: float = 0.0
    cache_hit: bool = False  # answered from dagmca's response cache: no call made
    retries: int = 0
    faults: list[str] = Field(default_factory=list)
    repaired: bool = False
    error: str = ""
    cost_usd: float = 0.0
    omitted_chars: int = 0  # of quoted material, cut to fit the context window
    reask: bool = False  # a re-ask of a degenerate reply, with varied sampling
    at: str = Field(default_factory=utcnow)


def made(calls: Iterable[CallRecord]) -> list[CallRecord]:
    """The requests among `calls`: a reply replayed from dagmca's cache made none, and
    costs nothing (it was counted when it was first asked)."""
    return [c for c in calls if not c.cache_hit]


def spent(calls: Iterable[CallRecord]) -> tuple[int, int, float]:
    """Calls, tokens and dollars of the requests among `calls`."""
    requests = made(calls)
    return (
        len(requests),
        sum(c.prompt_tokens + c.completion_tokens for c in requests),
        sum(c.cost_usd for c in requests),
    )


def prompt_tokens(calls: Iterable[CallRecord]) -> int:
    """The prompt tokens of the requests among `calls`."""
    return sum(c.prompt_tokens for c in made(calls))
