"""Runs killed part way through (after N calls, or when a condition holds) and what their
cache and a fault server's preflight saw, for the resume tests."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from dagmca.llm.openai_backend import PROBE
from tests.support.fault_server import FaultServer
from tests.support.sandbox import process_env

SETTINGS = ["--cpp", "2", "--rounds", "2", "--max-branches", "2", "--max-depth", "1", "--max-revisits", "0"]


def count_calls(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def kill_after(argv: list[str], db: Path, calls: int, *, cwd: Path, env: dict[str, str]) -> None:
    """Start `dagmca *argv` and SIGKILL it once `db` holds `calls` call records."""
    kill_when(argv, lambda: count_calls(db) >= calls, cwd=cwd, env=env)


def kill_when(argv: list[str], ready: Callable[[], bool], *, cwd: Path, env: dict[str, str]) -> None:
    """Start `dagmca *argv` and SIGKILL it as soon as `ready()`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagmca", *argv],
        cwd=cwd,
        env=process_env(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 200
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before the kill point"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def cached_keys(db: Path) -> set[str]:
    """The keys of cached replies (each a JSON object); not the remembered structured-output
    mode of the endpoint, which is a bare word."""
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT key FROM llm_cache WHERE value LIKE '{%'")}


def preflight_keys(server: FaultServer) -> set[str]:
    """The requests of the pre-flight's negotiation (made once per endpoint and model)."""
    return {k for k, body in server.bodies.items() if PROBE[0]["content"] in body["messages"][-1]["content"]}
