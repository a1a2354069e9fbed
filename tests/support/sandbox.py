"""The environment of every process a test starts: a short list of what a process
needs from the shell (nothing that configures dagmca, Neo4j or an LLM endpoint unless
the test passes it), and the network guard of tests/support/netguard/ on its path."""

from __future__ import annotations

import os
from pathlib import Path

KEEP = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "VIRTUAL_ENV")
NETGUARD = Path(__file__).parent / "netguard"


def process_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP if k in os.environ}
    env["PYTHONPATH"] = str(NETGUARD)
    env["COLUMNS"] = "200"
    env.update(extra or {})
    return env
