"""The settings a caller may give as keywords (`Workspace.run(..., model="x")`): one
key per setting of `SessionConfig`, each as it is accepted. Generated from the settings
model by scripts/gen_overrides.py; a test fails when the two differ."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from dagmca.config.roles import RoleSettings
from dagmca.graph import ModelRole


class OpenEvalOverrides(TypedDict, total=False):
    """`dagmca.evaluate`'s: all but `embedder` and `judge`, its parameters there."""

    llm: Literal["local", "openai", "fake"]
    model: str
    base_url: str | None
    temperature: float
    seed: int
    concurrency: int
    rpm: float | None
    tpm: float | None
    request_timeout_s: float
    max_retries: int
    endpoint_down_after: int
    cache: bool
    max_turn_tokens: int | None
    max_flag_tokens: int | None
    max_synthesis_tokens: int | None
    context_window: int | None
    reasoning_effort: Literal["low", "medium", "high"] | None
    sampling: str | None
    local_model: str | None
    otel: bool
    otel_content: bool
    protocol: Literal["mca", "decompose", "vote", "ensemble"]
    cpp: int
    depth: int
    rounds: int
    signals: bool
    convergence: Literal["jaccard", "embedding"]
    convergence_threshold: float
    strange_loops: int
    perspectives: Sequence[str]
    broadcast: bool
    self_reflect: bool
    max_iterations: int
    agents: int | None
    max_new_answers_per_agent: int
    max_new_answers_total: int | None
    fairness_lead: int
    agent_timeout_s: float | None
    max_vote_rounds: int
    decision_retries: int
    ensemble_voters: int | None
    agent_context_size: int
    success_threshold: float
    agent_memory: Literal["store", "session"]
    router: Literal["fixed", "affinity", "random", "round-robin", "greedy", "ucb"]
    router_temperature: float
    observers: Sequence[str]
    monitor_every: Literal["auto", "turn", "round", "off"]
    observer_calls: Literal["siblings", "joint", "per-lens"]
    urgency_threshold: float
    unquoted_excerpts: Literal["drop", "locate"]
    strategy: Literal["diverse", "urgent", "deep", "meta"]
    max_branches: int
    max_depth: int
    max_revisits: int
    max_nodes: int | None
    final_stubs: int
    max_open_stubs: int
    pair_prefilter: float
    stub_prefilter: float
    merge_threshold: float
    revisit_threshold: float
    reference_threshold: float
    duplicate_threshold: float
    duplicate_prefilter: float
    max_stub_checks: int
    ledger: Literal["auto", "off", "final", "all"]
    ledger_max_claims: int
    ledger_prefilter: float
    ledger_candidates: int
    max_llm_calls: int | None
    max_tokens: int | None
    max_cost_usd: float | None
    price_per_1k_prompt: float | None
    price_per_1k_completion: float | None
    passage_share: float
    max_passage_bytes: int
    roles: Mapping[ModelRole | str, RoleSettings | Mapping[str, Any]]


class EvalOverrides(OpenEvalOverrides, total=False):
    """`Workspace.eval`'s: all but `judge`, its judge's client there."""

    embedder: Literal["minilm", "minilm-onnx", "minilm-onnx-int8", "static"]


class OpenOverrides(OpenEvalOverrides, total=False):
    """`dagmca.run`'s: all but `embedder`, the workspace's embedder there."""

    judge: Literal["llm", "embedding"]


class Overrides(OpenEvalOverrides, total=False):
    """Keyword settings: a key left out keeps the settings' value."""

    embedder: Literal["minilm", "minilm-onnx", "minilm-onnx-int8", "static"]
    judge: Literal["llm", "embedding"]
