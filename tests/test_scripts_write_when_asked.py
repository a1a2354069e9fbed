"""A script writes a tracked file only when asked: the swarm's demo pictures (the Swarm
guide's) and its shipped streams are written where `--out` says, and with no `--out`
the script refuses rather than overwrite them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"script_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["swarm_demo", "make_swarm_tasks"])
def test_the_script_writes_only_where_out_says(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    parser = script(name).parser()
    with pytest.raises(SystemExit) as refused:
        parser.parse_args([])
    assert refused.value.code == 2 and "--out" in capsys.readouterr().err
    assert parser.parse_args(["--out", "somewhere"]).out == Path("somewhere")


def test_the_swarm_streams_written_from_the_shipped_seed_are_the_shipped_ones(tmp_path: Path) -> None:
    argv = sys.argv
    sys.argv = ["make_swarm_tasks.py", "--out", str(tmp_path)]
    try:
        script("make_swarm_tasks").main()
    finally:
        sys.argv = argv
    shipped = SCRIPTS.parent / "examples" / "swarm"
    for path in sorted(shipped.glob("*.jsonl")):
        made = (tmp_path / path.name).read_text(encoding="utf-8")
        assert made == path.read_text(encoding="utf-8"), path.name
