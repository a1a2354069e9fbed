"""Which lane each test runs in. The lanes a test's needs decide are added at collection,
so a new test is placed without anyone remembering to mark it; `slow` (a time, which the
test's code cannot show) is marked by hand, next to the test.

- `local_model`: marked by hand (the real SmolLM2 through xllamacpp);
- `bolt`: uses the ArcadeDB Bolt server (a JVM);
- `browser`: drives headless Chromium;
- `subprocess`: starts `dagmca` (or another program) as a process;
- `embedder`: loads the real MiniLM embedder;
- `slow`: any of `local_model`, or marked `@pytest.mark.slow` (a whole module:
  `pytestmark = pytest.mark.slow`) where the test, measured on a full run, is above the
  fast lane's per-test limit (`scripts/test.sh --durations=0` prints each test's time).

`scripts/test.sh --fast` leaves out `slow` and `local_model`; `.ci/run` runs everything.
"""

from __future__ import annotations

import inspect
import re
from functools import cache

import pytest

_SUBPROCESS = re.compile(r"\bdagmca\(|\bsubprocess\.|\bPopen\(|\brun_cli\(")
_EMBEDDER = re.compile(r"\bMiniLMEmbedder\(|\bminilm\b")


@cache
def _source(function: object) -> str:
    try:
        return inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


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
    if item.get_closest_marker("local_model"):
        item.add_marker(pytest.mark.slow)
