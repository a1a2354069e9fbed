"""The environment of every process a test starts: a short list of what a process
needs from the shell (nothing that configures dagmca, Neo4j or an LLM endpoint unless
the test passes it), the network guard of tests/support/netguard/ on its path, and
after it the checkout the tests are in: a process imports this checkout's dagmca (a git
worktree's), not whichever one the environment's editable install points at."""

from __future__ import annotations

import os
from pathlib import Path

KEEP = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "VIRTUAL_ENV")
NETGUARD = Path(__file__).parent / "netguard"
CHECKOUT = Path(__file__).resolve().parents[2]


def process_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP if k in os.environ}
    env["PYTHONPATH"] = os.pathsep.join((str(NETGUARD), str(CHECKOUT)))
    env["COLUMNS"] = "200"
    env.update(extra or {})
    return env
