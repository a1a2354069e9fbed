"""Sessions under concurrency, as users run them (subprocesses, one real SQLite store):
two runs never share an id, and a session has one writer at a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dagmca.store.sqlite import SQLiteStore
from tests.conftest import PASSAGE
from tests.support.sandbox import process_env

SMALL = ["--cpp", "2", "--rounds", "2", "--max-branches", "1", "--max-depth", "1", "--max-revisits", "0"]


def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dagmca", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(env),
    )


def test_two_runs_started_in_the_same_second_make_two_sessions(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    argv = ["run", str(passage), "--llm", "fake", "--quiet", "--store", str(db), *SMALL]
    procs = [start(*argv, cwd=tmp_path) for _ in range(2)]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    with SQLiteStore(db) as st:
        ids = [s.id for s in st.sessions()]
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    for sid in ids:
        check = subprocess.run(
            [sys.executable, "-m", "dagmca", "check", sid, "--store", str(db)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=process_env(),
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr

