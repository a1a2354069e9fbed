"""The documentation's Python examples run as written: each ```python block of the
pages below, in a fresh interpreter in an empty folder (so a block cannot lean on
another's leftovers), must exit 0."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["docs/guides/python-api.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for n, code in enumerate(BLOCK.findall((ROOT / page).read_text()), 1):
            found.append((page, n, code))
    return found


def test_every_page_has_examples() -> None:
    assert {page for page, _, _ in blocks()} == set(PAGES)


@pytest.mark.parametrize(("page", "number", "code"), blocks(), ids=lambda v: str(v)[:40])
def test_the_example_runs(tmp_path: Path, page: str, number: int, code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, f"{page} example {number} failed:\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), f"{page} example {number} printed nothing"
