"""An LLM call as the store accounts it."""

from __future__ import annotations

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
