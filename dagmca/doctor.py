"""`dagmca doctor`: can a run start here? Each check says ok or what is wrong; the
swarm's executor is listed wall by wall."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.errors import DagmcaError, UserError
from dagmca.graph import ModelRole
from dagmca.llm.base import LLMClient


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _python() -> str:
    return f"Python {sys.version.split()[0]} at {sys.executable}"


def _embedder(name: str) -> str:
    """The embedder the settings choose, found where it loads from (nothing is loaded)."""
    from dagmca.similarity.choose import EmbedderName
    from dagmca.similarity.static import StaticEmbedder

    chosen = EmbedderName(name)
    if chosen is EmbedderName.STATIC:
        static = StaticEmbedder()
        return f"{chosen.value}: {static.name}, shipped at {static.ensure()}"
    from dagmca.similarity.bundled import bundled_model, require

    require("torch", "minilm")
    if chosen is not EmbedderName.MINILM:
        require("onnxruntime", "onnx")
    path = bundled_model()
    if not (path / "config.json").exists():
        raise UserError(f"the embedding model's files are missing under {path}", "reinstall its extra")
    return f"{chosen.value}: all-MiniLM-L6-v2 at {path}"


def _store(location: str) -> str:
    from dagmca.store import open_store
    from dagmca.store.target import is_bolt_uri

    if not is_bolt_uri(location) and not Path(location).exists():
        return f"{location} (created by the first run)"
    with open_store(location) as st:
        state = "initialised" if st.is_initialised() else "not initialised (run initialises it)"
        return f"{st.location}, {state}, {len(st.sessions())} session(s)"


def _llm(cfg: SessionConfig) -> list[Check]:
    """Every endpoint the session would use, pinged once each: the session's own, and
    each role's that has one of its own (a judge on another server, say)."""
    from dagmca.llm.factory import check_backend, context_window, open_backend
    from dagmca.llm.routing import distinct, routes_of

    check_backend(cfg)
    backend = open_backend(cfg)
    checks: list[Check] = []
    try:
        routes = routes_of(backend.client)
        for client in distinct([route.client for route in routes.values()]):
            roles = ", ".join(role.value for role, route in routes.items() if route.client is client)
            name = "llm" if client is routes[ModelRole.DEBATE].client else f"llm ({roles})"
            try:
                asyncio.run(_ping(client))
            except DagmcaError as exc:
                checks.append(Check(name, False, exc.line()))
                continue
            own = cfg.role(next(r for r, route in routes.items() if route.client is client))
            where = {"local": "embedded llama.cpp server", "fake": "scripted, offline"}.get(
                own.llm, own.base_url or "the OpenAI API"
            )
            window = context_window(own, client)
            served = (
                f"; file {backend.gguf.describe()}" if backend.gguf is not None and own.llm == "local" else ""
            )
            checks.append(
                Check(
                    name,
                    True,
                    f"{own.llm}: model {client.model!r} answers ({where}) for {roles}{served}; structured "
                    f"output: {client.structured_mode}; context window {window.describe()}",
                )
            )
    finally:
        try:
            asyncio.run(backend.client.aclose())
        finally:
            backend.stop()
    return checks


def _executor() -> list[Check]:
    """The swarm's executor: its mode and each wall it raises here (code tasks need
    them; debates do not)."""
    from dagmca.executor.report import walls_here

    return [Check(f"executor: {wall.name}", wall.raised, wall.detail) for wall in walls_here()]


async def _ping(client: LLMClient) -> None:
    await client.ping()


def run_checks(cfg: SessionConfig, store_location: str) -> list[Check]:
    checks: list[tuple[str, Callable[[], str | list[Check]]]] = [
        ("python", _python),
        ("embeddings", lambda: _embedder(cfg.embedder)),
        ("store", lambda: _store(store_location)),
        ("llm", lambda: _llm(cfg)),
        ("executor", _executor),
    ]
    results = []
    for name, fn in checks:
        try:
            found = fn()
        except DagmcaError as exc:
            results.append(Check(name, False, exc.line()))
        except Exception as exc:  # a check must report, never crash the doctor
            results.append(Check(name, False, f"{type(exc).__name__}: {exc}"[:300]))
        else:
            results += found if isinstance(found, list) else [Check(name, True, found)]
    return results
