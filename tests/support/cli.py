"""The CLI as a user runs it: `dagmca` as a process, and the one-line error a bad input must give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.sandbox import process_env


def dagmca(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dagmca", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=process_env(env),
        timeout=timeout,
    )


def assert_user_error(proc: subprocess.CompletedProcess[str], needle: str, cwd: Path) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("dagmca: error:") and needle in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (cwd / ".dagmca").exists(), "a bad input must not create or touch the store"
