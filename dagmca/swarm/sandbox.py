"""The executor: model-written code is run here, so this is a security boundary.

Each run gets a fresh temporary folder, a separate interpreter (`python -I -B`, which
reads no environment variable, user site or current folder), a scrubbed environment,
limits on CPU seconds, address space, file size and processes (soft = hard), a wall
timeout, and no network. Its output goes to a file outside its folder, bounded by the
file-size limit and cut when read. At the end every process it started is killed and
its folder removed.

Isolation comes from the kernel where it allows, else from the child itself:

- `namespaces`: `unshare --mount --net --pid --fork --kill-child` (util-linux, on
  every Linux; no daemon, no image). The child gets a network namespace with no
  interface but a downed loopback, a PID namespace whose processes all die with it
  (so a child that escapes its process group is still reaped) with its own /proc,
  and a mount namespace in which every mount is read-only but the work folder, a
  size-limited tmpfs. Run as root, the child then becomes
  `nobody` (the process limit does not bind root); run as a user, `unshare -r` adds
  a user namespace, in which the limit binds anyway.
- `guarded`: where no namespace can be made, the child's audit hook refuses sockets,
  writes outside its folder, other programs and ctypes, and the process group is
  killed at the end. An audit hook is a speed bump, not a wall (a C extension called
  directly goes around it): the guide says so.

The mode is chosen once per process by trying it (`isolation()`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from dagmca.errors import EndpointError
from dagmca.graph.schema import Strict

Isolation = Literal["namespaces", "guarded"]
NOBODY = 65534
_RUN_UIDS = 0x70000000  # the guarded runs' own uids start here, far above any account's
CHILD = Path(__file__).with_name("child.py")
_UNSHARE = ["--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]


class ExecutorUnavailable(EndpointError):
    """The executor cannot lock itself in on this machine: code tasks cannot be checked
    (exit code 3, as an endpoint that cannot be used)."""


class Limits(Strict):
    """What one run may use. The defaults fit a small function and its tests."""

    cpu_seconds: int = 5
    wall_seconds: float = 10.0
    memory_mb: int = 512
    file_mb: int = 1
    processes: int = 16
    work_mb: int = 64  # the work folder's size, where namespaces give it its own tmpfs
    output_chars: int = 4000


@dataclass(frozen=True)
class Outcome:
    """How a run ended: `passed` when the program exited 0 within its limits and the
    child printed, after the program's last line had run, the run's nonce (so a
    program that exits 0 early, before its tests, fails)."""

    passed: bool
    exit_code: int | None
    timed_out: bool
    output: str
    seconds: float
    isolation: Isolation

    @property
    def reason(self) -> str:
        if self.passed:
            return "passed"
        if self.timed_out:
            return "timed out"
        if self.exit_code is not None and self.exit_code < 0:
            return f"killed by {_signal_name(-self.exit_code)}"
        if self.exit_code == 0:
            return "exited before the end of its program (its tests did not all run)"
        tail = self.output.strip().splitlines()
        return tail[-1][:200] if tail else f"exit {self.exit_code}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        return f"signal {number}"


def _unshare_prefix() -> list[str]:
    exe = shutil.which("unshare")
    if exe is None:
        return []
    return [exe, *_UNSHARE] if os.geteuid() == 0 else [exe, "--user", "--map-root-user", *_UNSHARE]


@functools.cache
def isolation() -> Isolation:
    """`namespaces` when `unshare` can make them here (tried once), else `guarded`."""
    prefix = _unshare_prefix()
    if not prefix or sys.platform != "linux":
        return "guarded"
    try:
        done = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "guarded"
    return "namespaces" if done.returncode == 0 else "guarded"


def preflight(limits: Limits | None = None, *, unsafe: bool = False) -> None:
    """Run a program that only prints, before the first call of a stream with code
    tasks: an executor that cannot lock itself in here stops the swarm before it spends,
    rather than failing every code task. Where no namespace can be made, only the audit
    hook would stand between the code and the user's files: refused unless `unsafe`."""
    if isolation() == "guarded" and not unsafe:
        raise ExecutorUnavailable(
            "no namespaces can be made here, so the executor would hold model-written code "
            "behind an audit hook only",
            "run where unshare works (root, or user namespaces allowed), or pass --unsafe-executor",
        )
    outcome = run("print('ready')\n", limits)
    if not outcome.passed or outcome.output.strip() != "ready":
        raise ExecutorUnavailable(
            f"the executor cannot run code here ({outcome.isolation}): {outcome.reason}",
            "see the Swarm guide's section on the executor",
        )


def _environment() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent", "PYTHONIOENCODING": "utf-8"}


def _rlimits(limits: Limits) -> dict[str, int]:
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_AS": limits.memory_mb * 1024 * 1024,
        "RLIMIT_FSIZE": limits.file_mb * 1024 * 1024,
        "RLIMIT_NPROC": limits.processes,
        "RLIMIT_CORE": 0,
    }


def run(
    program: str, limits: Limits | None = None, mode: Isolation | None = None, *, hook: bool = True
) -> Outcome:
    """Run `program` (Python source) in the sandbox and say how it ended. Blocking:
    call it from a worker thread in async code. `mode` defaults to the strongest the
    kernel allows here; `guarded` may be asked for, and `hook=False` leaves the audit
    hook out (the tests try each wall alone)."""
    limits = limits or Limits()
    mode = mode or isolation()
    base = Path(tempfile.mkdtemp(prefix="dagmca-sandbox-"))
    try:
        return _run_in(base, program, limits, mode, hook)
    finally:
        remove_tree(base)


def _run_in(base: Path, program: str, limits: Limits, mode: Isolation, hook: bool) -> Outcome:
    root = os.geteuid() == 0
    # namespaces: `nobody`, reaped with its PID namespace; guarded: a uid of the run's
    # own, so that every process it leaves, in any session, is found by that uid
    uid = (NOBODY if mode == "namespaces" else _unused_uid()) if root else None
    os.chmod(base, 0o711)  # the child may pass through to its folder, not list or write here
    work = base / "work"
    work.mkdir(mode=0o700)
    (work / "main.py").write_text(program, encoding="utf-8")
    if uid is not None:
        for path in (work, work / "main.py"):
            os.chown(path, uid, uid)
    nonce = secrets.token_hex(16)
    config = base / "config.json"
    config.write_text(
        json.dumps(
            {
                "cover": mode == "namespaces",
                "hook": hook,
                "nonce": nonce,
                "work_mb": limits.work_mb,
                "limits": _rlimits(limits),
                "uid": uid,
                "gid": uid,
            }
        ),
        encoding="utf-8",
    )
    prefix = _unshare_prefix() if mode == "namespaces" else []
    command = [*prefix, sys.executable, "-I", "-B", str(CHILD), str(config)]
    started = time.monotonic()
    timed_out = False
    with open(base / "output", "w+b") as out:
        proc = subprocess.Popen(
            command, cwd=work, env=_environment(), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
        )  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
        finally:
            _kill_group(proc)
            if uid is not None and uid != NOBODY:
                _kill_uid(uid)
        text, finished = _read_output(out, nonce, limits.output_chars)
    return Outcome(
        passed=code == 0 and not timed_out and finished,
        exit_code=code,
        timed_out=timed_out,
        output=text,
        seconds=round(time.monotonic() - started, 3),
        isolation=mode,
    )


def _read_output(out: BinaryIO, nonce: str, chars: int) -> tuple[str, bool]:
    """The output, cut, without the nonce's line; and whether the run ended with that
    line (the child writes it last, so it is at the end of the file)."""
    mark = f"\n{nonce}\n".encode()
    out.seek(0, os.SEEK_END)
    size = out.tell()
    out.seek(max(0, size - len(mark)))
    finished = out.read() == mark
    out.seek(0)
    kept = size - len(mark) if finished else size
    text = out.read(min(kept, chars * 4)).decode("utf-8", "replace")[:chars]
    return text, finished


def remove_tree(path: Path) -> None:
    """Remove a run's folder, even where the program took its own rights away from
    a subfolder (chmod 0): each folder is made the owner's again and the removal retried."""
    shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        return
    for folder, subfolders, _ in os.walk(path):
        for name in subfolders:  # before os.walk goes down into it
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(folder, name), 0o700, follow_symlinks=False)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def _uids_running() -> set[int]:
    """The real uids of the living processes (from their status: a process that
    changed its uid is not dumpable, and its /proc folder belongs to root)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = dict(
                    line.split(":", 1) for line in Path(f"/proc/{entry}/status").read_text().splitlines()
                )
                if not fields["State"].strip().startswith("Z"):  # a zombie is dead, awaiting its reaper
                    found.add(int(fields["Uid"].split()[0]))
    return found


def _unused_uid() -> int:
    """A uid no account and no process has: high, random, checked against /proc."""
    running = _uids_running()
    while True:
        uid = _RUN_UIDS + secrets.randbelow(1 << 24)
        if uid not in running:
            return uid


def _kill_uid(uid: int) -> None:
    """Kill every process of the run's uid, in whatever session it went to: a forked
    helper becomes that uid and sends SIGKILL to all it may signal (`kill -1`), which
    is every process of that uid and nothing else; until none is left."""
    deadline = time.monotonic() + 2.0
    while uid in _uids_running() and time.monotonic() < deadline:
        pid = os.fork()
        if pid == 0:  # only system calls here, then out without Python's shutdown
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.02)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's session (its process group): in `namespaces` mode this takes
    the PID namespace's init with it, and the kernel kills every process inside."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:  # the killed take a moment to go; init reaps them
        try:
            os.killpg(proc.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not _alive_in_group(proc.pid):
            return
        time.sleep(0.02)


def _alive_in_group(pgid: int) -> bool:
    """Whether a process of the group is still running (not a zombie awaiting init)."""
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(stat[2]) == pgid and stat[0] != "Z":
                return True
    return False
