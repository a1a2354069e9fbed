"""Programs the executor must contain, and what the tests watch from outside it: the
processes a run made (did any outlive it?), their memory together, SysV segments."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

MARK = b"dagmca-sandbox"  # in every sandboxed process's arguments


def leftovers(grace_s: float = 10.0) -> list[str]:
    """Processes still running the executor's child, after up to `grace_s` for those
    that are on their way out: the scan sees the whole machine, so on a parallel test
    run another worker's child, alive until its own executor ends it, shows up for a
    moment, while a process that escaped its executor stays."""
    deadline = time.monotonic() + grace_s
    while True:
        found = _children()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _children() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if (MARK in cmd or b"dagmca/swarm/child.py" in cmd) and state != "Z":
                found.append(pid)
    return found


def _processes() -> dict[int, tuple[int, int]]:
    """Every living process: pid -> (parent, start time)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    found[int(entry)] = (int(fields[1]), int(fields[19]))
    return found


def _pss_kb(pid: int) -> int:
    """A process's proportional share of memory (pages shared by forks counted once
    across them)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


class Watch:
    """From outside the sandbox, while a run goes on: every process descended from
    this one (by its start time too, so a reused pid is not taken for it), and the
    peak of their resident memory together. `survivors()` after the run: those still
    alive, which the test then kills."""

    def __init__(self, every_s: float = 0.05) -> None:
        self.every_s = every_s
        self.seen: dict[int, int] = {}
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            table = _processes()
            ours = {me}
            grew = True
            while grew:  # the tree below this process, whatever the order /proc lists it in
                grew = False
                for pid, (parent, _) in table.items():
                    if parent in ours and pid not in ours:
                        ours.add(pid)
                        grew = True
            ours.discard(me)
            for pid in ours:
                self.seen.setdefault(pid, table[pid][1])
            self.peak_mb = max(self.peak_mb, sum(_pss_kb(p) for p in ours) / 1024)
            self._stop.wait(self.every_s)

    def survivors(self, grace_s: float = 3.0) -> list[int]:
        """The processes seen during the run that are still alive (after `grace_s`
        for those on their way out); each is killed, so that a failing test leaves
        none behind."""
        deadline = time.monotonic() + grace_s
        while True:
            table = _processes()
            alive = [pid for pid, start in self.seen.items() if pid in table and table[pid][1] == start]
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return alive


def shm_keys() -> set[int]:
    """The keys of the SysV shared-memory segments of the host's IPC namespace."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines}


def remove_shm(key: int) -> None:
    """Remove a segment a failing test left (by its key)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ident = libc.shmget(key, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, 0, None)  # IPC_RMID


# a fresh interpreter, started the way no audit hook sees (`_posixsubprocess.fork_exec`),
# running `code`; in the answer's program, before `def f`
FRESH = (
    "import _posixsubprocess, os, sys\n"
    "def fresh(code):\n"
    "    r, w = os.pipe()\n"
    "    pid = _posixsubprocess.fork_exec([sys.executable, '-c', code], [os.fsencode(sys.executable)],\n"
    "        True, (), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1,\n"
    "        None, True)\n"
    "    os.close(w)\n"
    "    os.read(r, 64)\n"
    "    os.close(r)\n"
    "    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
)

HARMFUL = {
    "loop": "while True:\n    pass\n",
    "write": "open({target!r}, 'w').write('escaped')\n",
    "write-ctypes": (
        "import ctypes\nfd = ctypes.CDLL(None).open({target!r}.encode(), 0o101, 0o644)\n"
        "assert fd >= 0, 'not written'\n"
    ),
    "write-up": "open('../../{name}', 'w').write('escaped')\n",
    # {port}: a server of the test's, listening on 127.0.0.1: reaching it is the leak
    "socket": (
        "import ctypes, struct\nlibc = ctypes.CDLL(None)\nfd = libc.socket(2, 1, 0)\n"
        "addr = struct.pack('>HH4s8x', 2, {port}, bytes([127, 0, 0, 1]))\n"
        "addr = addr[1::-1] + addr[2:]  # the family in the host's order, the port in network order\n"
        "assert fd >= 0 and libc.connect(fd, addr, 16) == 0, 'no connection'\n"
    ),
    "socket-module": (
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')\n"
    ),
    "shell-out": "import os\nassert os.system('echo escaped > {target}') == 0, 'not written'\n",
    "fork": (
        "import os, time\nfor _ in range(1000):\n    if os.fork() == 0:\n        time.sleep(60)\n"
        "        os._exit(0)\n"
    ),
    "memory": "block = bytearray(4 * 1024 ** 3)\n",
    "escape-session": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(120)\nraise SystemExit(1)\n"
    ),
    "escape-session-twice": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.setsid()\n"
        "        time.sleep(120)\n    time.sleep(120)\nraise SystemExit(1)\n"
    ),
}
