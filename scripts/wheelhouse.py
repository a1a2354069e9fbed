"""The wheelhouse a wheel installs from with no index: every package it requires, and
theirs in turn (markers evaluated for this interpreter, extras followed), at the version
this environment holds, as wheel files in one folder. Only the wheels missing from the
folder are fetched (`pip download --no-deps`, from the configured index), so a second
call downloads nothing. A wheel enters the folder whole (downloaded beside it, then
renamed), so checks running at once may share the folder.

    .venv/bin/python scripts/wheelhouse.py WHEEL FOLDER CONSTRAINTS

CONSTRAINTS is written with each package's pinned version: an install given it takes
those versions, whatever else the folder holds.
"""

from __future__ import annotations

import argparse
import email
import os
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import Version


def wheel_requires(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        found = email.message_from_bytes(wheel.read(name))
    return found.get_all("Requires-Dist") or []


def applying(lines: list[str], extras: set[str]) -> list[Requirement]:
    """The requirements that hold here, for a package installed with `extras`."""
    out = []
    for line in lines:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras}):
            out.append(req)
    return out


def closure(top: list[str]) -> dict[NormalizedName, Version]:
    """Each package required, at the version installed here (an error where it is not,
    or where that version does not satisfy a requirement)."""
    pins: dict[NormalizedName, Version] = {}
    seen: set[tuple[NormalizedName, frozenset[str]]] = set()
    todo = applying(top, set())
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            sys.exit(f"wheelhouse: {req} is required but not installed in {sys.prefix}")
        version = Version(dist.version)
        if not req.specifier.contains(version, prereleases=True):
            sys.exit(f"wheelhouse: {req} is required, and {sys.prefix} holds {version}")
        if (name, frozenset(req.extras)) in seen:
            continue
        seen.add((name, frozenset(req.extras)))
        pins[name] = version
        todo += applying(dist.requires or [], set(req.extras))
    return pins


def held(folder: Path) -> set[tuple[NormalizedName, Version]]:
    found = set()
    for path in folder.glob("*.whl"):
        try:
            name, version, _, _ = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        found.add((name, version))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("wheel", type=Path)
    parser.add_argument("folder", type=Path)
    parser.add_argument("constraints", type=Path)
    args = parser.parse_args()
    pins = closure(wheel_requires(args.wheel))
    args.folder.mkdir(parents=True, exist_ok=True)
    missing = sorted(f"{n}=={v}" for n, v in pins.items() if (n, v) not in held(args.folder))
    if missing:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        with tempfile.TemporaryDirectory(dir=args.folder, prefix=".download-") as tmp:
            subprocess.run([*command, "--dest", tmp, *missing], check=True)
            for path in Path(tmp).glob("*.whl"):
                os.replace(path, args.folder / path.name)
    args.constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pins.items())), encoding="utf-8")
    print(f"wheelhouse: {len(pins)} packages, {len(missing)} downloaded")


if __name__ == "__main__":
    main()
