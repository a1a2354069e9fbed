"""Progress where stderr is no terminal (`2>log`, a CI job): lines, as `eval` writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import dagmca
from tests.support.sessions import PASSAGE

pytestmark = pytest.mark.slow  # dagmca processes


def test_a_run_with_stderr_redirected_writes_progress_lines(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    args = ["run", str(passage), "--llm", "fake", "--max-depth", "1", "--max-branches", "1"]
    proc = dagmca(*args, "--session", "loud", cwd=tmp_path)  # stderr is a pipe here, as with 2>log
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("dagmca: [")]
    assert len(lines) >= 3, proc.stderr
    assert all(" calls (" in line and "tokens, $" in line for line in lines[1:]), lines
    said = "\n".join(lines)
    assert all(f"] {phase}" in said for phase in ("main debate", "branches", "final integration", "done"))
    assert "\x1b[" not in proc.stderr, "no terminal codes in a file"
    quiet = dagmca(*args, "--session", "hush", "--quiet", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
