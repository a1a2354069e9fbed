"""Programs the swarm's executor must contain, and a check that none of its children outlived it."""

from __future__ import annotations

import os
import time
from pathlib import Path


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
            if b"dagmca/swarm/child.py" in cmd and state != "Z":
                found.append(pid)
    return found


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
