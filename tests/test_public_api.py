"""What a library caller sees of dagmca: a short `__all__` in `dagmca` and `dagmca.api`,
and every error it can get through the public API (the store too, via `ws.store`)
inside `DagmcaError`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import dagmca
import dagmca.api
from dagmca.api import Workspace
from dagmca.errors import DagmcaError, SessionLinked, StoreError
from dagmca.graph import EdgeRecord, EdgeType
from dagmca.similarity import HashingEmbedder
from dagmca.store.base import GraphStore


def test_a_write_the_store_refuses_through_ws_store_is_a_dagmca_error(tmp_path: Path) -> None:
    edge = EdgeRecord(source="nowhere", target="nothing", type=EdgeType.HAS_ROUND, session="s")

    def refused(store: GraphStore) -> None:
        store.write(edges=[edge])

    async def main() -> None:
        async with Workspace(tmp_path / "w.db", embedder=HashingEmbedder()) as ws:
            await ws.store.aread(refused)

    with pytest.raises(DagmcaError) as caught:
        asyncio.run(main())
    assert isinstance(caught.value, StoreError) and caught.value.line().startswith("write refused")


def test_a_linked_session_is_a_store_error_with_a_fix() -> None:
    exc = SessionLinked("s1", ["s2", "eval-1"])
    assert isinstance(exc, DagmcaError) and exc.linked == ["s2", "eval-1"]
    assert exc.line().startswith("session s1 is linked from s2, eval-1 — ")


def test_the_public_names_are_few_and_the_cli_s_stay_importable() -> None:
    for hidden in ("BaseWorkspace", "settings_from", "in_workspace"):
        assert hidden not in dagmca.api.__all__
    assert all(hasattr(dagmca.api, name) for name in dagmca.api.__all__)
    assert all(getattr(dagmca, name) is not None for name in dagmca.__all__)
    from dagmca.api.sync import in_workspace
    from dagmca.workspace import BaseWorkspace, settings_from

    assert callable(in_workspace) and callable(settings_from) and issubclass(Workspace, BaseWorkspace)
