"""What a workspace makes of what a caller hands in (settings as a SessionConfig or a
mapping, a store or a neo4j driver), and what it hands back of a session's spend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from dagmca.config import SessionConfig
from dagmca.config.session import BUDGETS as BUDGETS
from dagmca.errors import SettingsError, UserError
from dagmca.llm.metered import MeteredLLM
from dagmca.passage import MAX_QUESTION_BYTES as MAX_QUESTION_BYTES
from dagmca.store.base import GraphStore
from dagmca.workspace.results import RoleShare, Spend

SettingsLike = SessionConfig | Mapping[str, Any] | None
M = TypeVar("M", bound=BaseModel)


def settings_from(settings: SettingsLike, overrides: Mapping[str, object] | None = None) -> SessionConfig:
    """A SessionConfig from what a caller handed in: a SessionConfig, or a mapping of
    setting names, with `overrides` on top. A bad name or value is a SettingsError."""
    base = settings.model_dump() if isinstance(settings, SessionConfig) else dict(settings or {})
    try:
        return SessionConfig.model_validate({**base, **dict(overrides or {})})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "settings"
        raise SettingsError(
            f"setting {key}: {first['msg']}", "see `dagmca config show`", setting=key
        ) from None


def options_from(kind: type[M], given: M | Mapping[str, Any] | None) -> M:
    """A command's options object (`EvalOptions`, `SwarmOptions`) from what a caller
    handed in: the object, a mapping of its fields, or None for every default. A bad
    name or value is a UserError that names it."""
    if isinstance(given, kind):
        return given
    try:
        return kind.model_validate(dict(given or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or kind.__name__
        raise UserError(f"option {key}: {first['msg']}", f"see {kind.__name__}'s fields") from None


def spend_of(llm: MeteredLLM) -> Spend:
    """What one run of a session spent, from its client's meter."""
    m = llm.meter
    return Spend(
        calls=m.calls,
        cache_hits=m.cache_hits,
        failures=m.failures,
        refused=m.refused,
        prompt_tokens=m.usage.prompt_tokens,
        completion_tokens=m.usage.completion_tokens,
        cost_usd=m.cost_usd,
        cached_tokens=m.usage.cached_tokens,
        invalid_outputs=m.invalid_outputs,
        retries=m.retries,
        repairs=m.repairs,
        faults=dict(sorted(m.faults.items())),
        earlier_calls=m.earlier_calls,
        earlier_tokens=m.earlier_tokens,
        earlier_cost_usd=m.earlier_cost_usd,
        model=llm.model,
        prices=llm.prices.source,
        by_role=[RoleShare(r.role, r.model, r.calls, r.usage.total, r.cost_usd) for r in llm.by_role()],
    )


def given_store(store: object, database: str | None) -> GraphStore:
    """A store the caller handed in: a GraphStore as it is, a neo4j driver behind one
    (its call log and response cache in memory: there is no file to keep them beside)."""
    if isinstance(store, GraphStore):
        return store
    import neo4j

    from dagmca.store.neo4j import Neo4jStore

    if not isinstance(store, neo4j.Driver):
        raise UserError(
            f"store must be a path, a URI, a neo4j.Driver or a GraphStore, not {type(store).__name__}",
            "pass one of those",
        )
    where = f"neo4j driver{f' (database {database})' if database else ''}"
    return Neo4jStore(store, database=database, location=where)
