"""Which lane each test runs in, decided at collection so a new test is placed without
anyone remembering to mark it.

- `local_model`: marked by hand (the real SmolLM2 through xllamacpp);
- `bolt`: uses the ArcadeDB Bolt server (a JVM);
- `browser`: drives headless Chromium;
- `subprocess`: starts `dagmca` (or another program) as a process;
- `embedder`: loads the real MiniLM embedder;
- `slow`: any of `local_model`, or listed in `slow.txt`, the tests a full run measured
  above the fast lane's per-test limit (`scripts/test.sh --durations=0` prints them).

`scripts/test.sh --fast` leaves out `slow` and `local_model`; `.ci/run` runs everything.
"""

from __future__ import annotations

import inspect
import re
from functools import cache
from pathlib import Path

import pytest

SLOW_LIST = Path(__file__).with_name("slow.txt")
_SUBPROCESS = re.compile(r"\bdagmca\(|\bsubprocess\.|\bPopen\(|\brun_cli\(")
_EMBEDDER = re.compile(r"\bMiniLMEmbedder\(|\bminilm\b")


@cache
def slow_tests() -> frozenset[str]:
    """Test ids (without parameters) measured slow; comments and blank lines ignored."""
    if not SLOW_LIST.exists():
        return frozenset()
    lines = (line.split("#", 1)[0].strip() for line in SLOW_LIST.read_text().splitlines())
    return frozenset(line for line in lines if line)


@cache
def _source(function: object) -> str:
    try:
        return inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def base_id(item: pytest.Item) -> str:
    """`tests/test_x.py::test_y`, without the parameters in brackets."""
    return item.nodeid.split("[", 1)[0]


def place(item: pytest.Item) -> None:
    fixtures = set(getattr(item, "fixturenames", ()))
    source = _source(getattr(item, "function", None))
    if "bolt_server" in fixtures or any(f.startswith("bolt") for f in fixtures):
        item.add_marker(pytest.mark.bolt)
    if "browser" in fixtures or item.path.name == "test_viewer.py":
        item.add_marker(pytest.mark.browser)
    if _SUBPROCESS.search(source):
        item.add_marker(pytest.mark.subprocess)
    if _EMBEDDER.search(source):
        item.add_marker(pytest.mark.embedder)
    if item.get_closest_marker("local_model") or base_id(item) in slow_tests():
        item.add_marker(pytest.mark.slow)
