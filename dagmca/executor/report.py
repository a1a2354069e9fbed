"""Which walls the executor raises on this machine, each checked by a probe run inside
them (what `dagmca doctor` shows): the mode, the namespaces, the seccomp filter, the
capabilities and uid, the root's contents, and the bound on memory and processes."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from dagmca.executor import cgroup, root, syscalls, walls
from dagmca.executor.limits import FALLBACK_TASKS, Isolation, Limits
from dagmca.executor.supervisor import run

# run inside the walls: what it sees of them, as JSON
_PROBE = """\
import json, os, socket
status = dict(line.split(':', 1) for line in open('/proc/self/status'))
try:
    socket.socket(socket.AF_UNIX).close()
    refused = False
except PermissionError:
    refused = True
writable = []
for folder, subfolders, _ in os.walk('/'):
    if folder == '/proc':
        subfolders[:] = []
    elif os.access(folder, os.W_OK):
        writable.append(folder)
print(json.dumps({
    'ns': {n: os.readlink('/proc/self/ns/' + n) for n in %r},
    'seccomp': status['Seccomp'].strip(), 'socket_refused': refused,
    'caps': int(status['CapEff'].strip(), 16), 'uid': os.getuid(),
    'root': sorted(os.listdir('/')), 'writable': writable,
}))
"""


@dataclass(frozen=True)
class Wall:
    name: str
    raised: bool
    detail: str


def _bound(limits: Limits) -> Wall:
    where = cgroup.hierarchy()
    if where is not None:
        return Wall(
            "memory and processes", True,
            f"{where.describe()}: {limits.memory_mb} MB and {limits.processes} processes or threads a run",
        )  # fmt: skip
    tasks = min(limits.processes, FALLBACK_TASKS)
    each = limits.memory_mb // tasks
    if os.geteuid() == 0:
        return Wall(
            "memory and processes", False,
            f"no control group can be made, and the process limit does not bind root: {each} MB of "
            "address space a process, with no bound on processes",
        )  # fmt: skip
    return Wall(
        "memory and processes", True,
        f"no control group can be made: at most {tasks} processes or threads of {each} MB of "
        "address space each",
    )  # fmt: skip


def walls_here(limits: Limits | None = None) -> list[Wall]:
    """Each wall, and whether a run here raises it."""
    limits = limits or Limits()
    mode, how = walls.isolation()
    first = Wall("mode", mode is Isolation.BUBBLEWRAP, f"{mode.value}: {how}")
    if mode is Isolation.NONE:
        return [
            first,
            Wall("walls", False, "none: code tasks are refused unless --unsafe-executor"),
            _bound(limits),
        ]
    outcome = run(_PROBE % (walls.NAMESPACES,), limits)
    if not outcome.passed:
        return [first, Wall("probe", False, f"a run inside the walls failed: {outcome.reason}")]
    seen = json.loads(outcome.output)
    shared = [n for n, inode in seen["ns"].items() if inode == os.readlink(f"/proc/self/ns/{n}")]
    laid = root.root()
    outside = "root (no capability outside the namespace)" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    return [
        first,
        Wall("namespaces", not shared, "unshared: " + ", ".join(n for n in seen["ns"] if n not in shared)
             + (f"; shared with the host: {', '.join(shared)}" if shared else "")),
        Wall("seccomp", seen["seccomp"] == "2" and seen["socket_refused"],
             f"filter {'loaded' if seen['seccomp'] == '2' else 'NOT loaded'}; refuses {syscalls.summary()}"),
        Wall("privileges", seen["caps"] == 0 and seen["uid"] == walls.UID,
             f"uid {seen['uid']} inside, no capabilities; outside, {outside}"),
        Wall("root", set(seen["writable"]) <= {walls.WORK, "/dev/shm", "/dev/pts"},
             f"read-only: {', '.join(laid.folders)}; writable: {', '.join(seen['writable'])} "
             f"({walls.WORK} and /dev/shm: tmpfs of {limits.work_mb} MB each)"),
        _bound(limits),
        Wall("verdict", True, "computed in a sandboxed process of its own; only data comes from the answer"),
    ]  # fmt: skip
