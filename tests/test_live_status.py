"""status.json is valid JSON at every moment of a run, and `dagmca status` reads it
from another process while the run goes on; events.jsonl logs every event."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dagmca.llm.fake import ScriptedCall
from tests.support.sandbox import process_env
from tests.support.sessions import RunSession

pytestmark = pytest.mark.slow


def test_status_is_valid_json_at_every_moment(run_fake: RunSession, tmp_path: Path) -> None:
    folder = tmp_path / "out" / "live"
    done = threading.Event()
    reads: list[dict[str, Any]] = []
    lag: list[int] = []
    failure: list[BaseException] = []

    cli: list[subprocess.Popen[str]] = []

    def read() -> None:
        """Another reader than the writer: the run happens in the test's own thread."""
        try:
            while not done.is_set():
                path = folder / "status.json"
                if path.exists():
                    reads.append(json.loads(path.read_text(encoding="utf-8")))  # never half a file
                    # events.jsonl reaches the disk no later than the status that counts them
                    logged = (folder / "events.jsonl").read_bytes().count(b"\n")
                    lag.append(reads[-1]["events"] - logged)
                    if not cli and reads[-1]["active_debates"]:  # another process, while it runs
                        cli.append(
                            subprocess.Popen(
                                [sys.executable, "-m", "dagmca", "status", "live", "--out", str(folder)],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                text=True,
                                env=process_env(),
                                cwd=tmp_path,
                            )
                        )
                time.sleep(0.005)
        except BaseException as exc:  # reported by the test thread
            failure.append(exc)

    def delay(_: ScriptedCall) -> float:
        """Slower while the status command starts and reads, so the run is still running
        when it reads, however long a busy machine takes to start a Python process."""
        return 0.5 if cli and cli[0].poll() is None else 0.1

    reader = threading.Thread(target=read)
    reader.start()
    try:
        run_fake(session="live", cpp=3, depth=2, rounds=3, max_depth=1, max_branches=2, delay=delay,
                 convergence_threshold=1.0)  # fmt: skip
    finally:
        done.set()
        reader.join()
    assert not failure, failure
    final = json.loads((folder / "status.json").read_text(encoding="utf-8"))
    assert len(reads) > 20, "the reader saw the file many times during the run"
    assert max(lag) <= 0, "a status counted events that events.jsonl did not have yet"
    assert final["status"] == "done" and final["active_debates"] == {}
    # it moved: phases, rounds of active debates, calls
    assert {"main debate", "branches"} <= {r["phase"] for r in reads}
    main_rounds = {
        r["active_debates"]["live/main"]["round"] for r in reads if "live/main" in r["active_debates"]
    }
    assert len(main_rounds) >= 2, main_rounds
    calls = [r["llm_calls"] for r in reads]
    assert calls == sorted(calls) and calls[-1] > calls[0]
    assert all({"elapsed_s", "agents", "tokens", "cost_usd", "last_event"} <= set(r) for r in reads)
    stdout, stderr = cli[0].communicate(timeout=60)
    assert cli[0].returncode == 0, stderr
    assert "running (" in stdout and "live/" in stdout
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "phase" and events[-1] == {**final["last_event"]}
    assert sum(e["event"] == "turn" for e in events) > 20
    assert [e["elapsed_s"] for e in events] == sorted(e["elapsed_s"] for e in events)
