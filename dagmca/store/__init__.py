"""Graph stores: the interface, the embedded SQLite default, and how to open one."""

from __future__ import annotations

from dagmca.store.base import GraphStore, StoreError
from dagmca.store.opening import (
    DEFAULT_LLM_STORE,
    DEFAULT_STORE,
    llm_store_path,
    open_existing,
    open_store,
    require_session,
    resolve_store,
)
from dagmca.store.sqlite import SQLiteStore

__all__ = [
    "DEFAULT_LLM_STORE",
    "DEFAULT_STORE",
    "GraphStore",
    "SQLiteStore",
    "StoreError",
    "llm_store_path",
    "open_existing",
    "open_store",
    "require_session",
    "resolve_store",
]
