"""A control group for each run: memory and processes bounded for the run as a whole.

A run's group is made beneath this process's own (cgroup v2 where the memory and pids
controllers are enabled for its children; else v1's memory and pids hierarchies), with
`memory.max` and `pids.max` (v1: `memory.limit_in_bytes`, `pids.max`), and no swap.
The sandboxed processes join it themselves, first thing, through a descriptor of the
group's `cgroup.procs` that the executor opened: every process the task's code starts
is then counted against the run's limits, whatever session or group it moves to. After
the run the group says whether the kernel killed a process for memory, and is removed.

Whether a group can be made is tried once per process (`hierarchy()`); where none can,
the executor falls back to per-process limits (see `supervisor.py`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

_PREFIX = "dagmca-run-"


@dataclass(frozen=True)
class Hierarchy:
    """Where a run's groups are made: one folder for v2, one per controller for v1."""

    version: int
    memory: Path
    pids: Path

    def describe(self) -> str:
        if self.version == 2:
            return f"cgroup v2 under {self.memory} (memory.max, pids.max)"
        return f"cgroup v1 under {self.memory} and {self.pids} (memory.limit_in_bytes, pids.max)"


def _own_groups() -> dict[str, str]:
    """This process's group in each hierarchy: controller (or '' for v2) -> path."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _mounts() -> dict[str, Path]:
    """The mount point of each v1 controller (and of v2, as '')."""
    found: dict[str, Path] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ", 1)
        kind, _, options = right.split(" ", 2)
        point = Path(left.split()[4])
        if kind == "cgroup2":
            found.setdefault("", point)
        elif kind == "cgroup":
            for option in options.split(","):
                found.setdefault(option, point)
    return found


def _writable_here(folder: Path) -> bool:
    """Whether a group can be made (and removed) in `folder`, tried."""
    probe = folder / f"{_PREFIX}probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def _v2(mounts: dict[str, Path], groups: dict[str, str]) -> Hierarchy | None:
    if "" not in mounts or "" not in groups:
        return None
    folder = mounts[""] / groups[""].lstrip("/")
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if {"memory", "pids"} <= set(enabled) and _writable_here(folder):
        return Hierarchy(2, folder, folder)
    return None


def _v1(mounts: dict[str, Path], groups: dict[str, str]) -> Hierarchy | None:
    if not {"memory", "pids"} <= mounts.keys() or not {"memory", "pids"} <= groups.keys():
        return None
    memory = mounts["memory"] / groups["memory"].lstrip("/")
    pids = mounts["pids"] / groups["pids"].lstrip("/")
    if _writable_here(memory) and _writable_here(pids):
        return Hierarchy(1, memory, pids)
    return None


@functools.cache
def hierarchy() -> Hierarchy | None:
    """Where this process can make a run's groups, tried once; None where it cannot."""
    try:
        mounts, groups = _mounts(), _own_groups()
    except (OSError, ValueError):
        return None
    return _v2(mounts, groups) or _v1(mounts, groups)


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


@dataclass
class RunGroup:
    """One run's group (one folder per hierarchy in v1)."""

    hierarchy: Hierarchy
    folders: list[Path]

    @classmethod
    def make(cls, where: Hierarchy, memory_mb: int, processes: int) -> RunGroup:
        name = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        memory, pids = where.memory / name, where.pids / name
        group = cls(where, [memory] if where.version == 2 else [memory, pids])
        try:
            for folder in group.folders:
                folder.mkdir()
            limit = str(memory_mb * 1024 * 1024)
            if where.version == 2:
                _write(memory / "memory.max", limit)
                with contextlib.suppress(OSError):  # no swap accounting: no swap to bound
                    _write(memory / "memory.swap.max", "0")
            else:
                _write(memory / "memory.limit_in_bytes", limit)
                with contextlib.suppress(OSError):
                    _write(memory / "memory.memsw.limit_in_bytes", limit)
            _write(pids / "pids.max", str(processes))
        except OSError:
            group.remove()
            raise
        return group

    def procs(self) -> list[Path]:
        return [folder / "cgroup.procs" for folder in self.folders]

    def _members(self) -> set[int]:
        found: set[int] = set()
        for path in self.procs():
            with contextlib.suppress(OSError, ValueError):
                found |= {int(pid) for pid in path.read_text().split()}
        return found

    def killed_for_memory(self) -> bool:
        """Whether the kernel killed a process of the run for the memory limit."""
        memory = self.folders[0]
        name = "memory.events" if self.hierarchy.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (memory / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        return False

    def hit_process_limit(self) -> bool:
        with contextlib.suppress(OSError, ValueError):
            for line in (self.folders[-1] / "pids.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "max" and int(value) > 0:
                    return True
        return False

    def kill(self) -> None:
        """Kill every process left in the group, whatever session it went to."""
        if self.hierarchy.version == 2:
            with contextlib.suppress(OSError):
                _write(self.folders[0] / "cgroup.kill", "1")
                return
        deadline = time.monotonic() + 2.0
        while (members := self._members()) and time.monotonic() < deadline:
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        """Remove the group's folders once the processes in them are gone."""
        deadline = time.monotonic() + 2.0
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: a killed process still on its way out
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.005)
