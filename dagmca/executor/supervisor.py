"""One run: the answer's process and the tests' process, started, watched and ended.

The two run side by side, each behind the walls (`walls.py`), joined by two pipes (the
tests' calls one way, the answer's replies the other); the verdict comes back on a third
that only the tests' process holds. Code and tests reach each process through an
unnamed file of its own; each process's output goes to another, bounded by the file-size
limit. The run's control group (`cgroup.py`), when one can be made, bounds both together.

The run ends when the tests' process has said its verdict, or at the wall time: both
sandboxes are then killed (with the PID namespace goes every process inside, and the
control group is emptied before it is removed), and the outcome says why in the task's
terms, from the verdict and from how the answer's process ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import BinaryIO

from dagmca.executor import cgroup, root, walls
from dagmca.executor.inside import EXIT_LOCKIN, EXIT_OUTPUT
from dagmca.executor.limits import ExecutorUnavailable, Isolation, Limits, Outcome


@dataclass
class _Ended:
    code: int | None  # as a shell says it: 128 + the signal that killed it
    cpu_seconds: float


@dataclass
class _Sandboxed:
    popen: subprocess.Popen[bytes]
    output: BinaryIO
    ended: _Ended | None = None

    def wait(self, deadline: float) -> bool:
        """Whether it ended before `deadline` (reaped, with its CPU time and its
        descendants' that were reaped inside)."""
        if self.ended is None:
            try:
                fd = os.pidfd_open(self.popen.pid)
            except OSError:  # reaped already
                return True
            try:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
                    return False
            finally:
                os.close(fd)
            _, status, usage = os.wait4(self.popen.pid, 0)
            code = os.waitstatus_to_exitcode(status)
            self.popen.returncode = code  # reaped here, so that Popen does not try again
            self.ended = _Ended(128 - code if code < 0 else code, usage.ru_utime + usage.ru_stime)
        return True

    def kill(self) -> None:
        if self.ended is not None:
            return  # reaped: its pid may be another process's by now
        # its process group: bwrap, and its child while that is still being set up (the
        # child dies with bwrap only once set up: killed earlier, it would wait forever);
        # once set up, the rest dies with the sandbox's first process, by its PID namespace
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.wait(time.monotonic() + 5.0)


def isolation() -> Isolation:
    return walls.isolation()[0]


def check(
    code: str, tests: str, entry_point: str | None, limits: Limits | None = None, *, unsafe: bool = False
) -> Outcome:
    """Run `tests` against the answer `code` (its function `entry_point`, which the
    tests call as `candidate` or by its name) and say how it went. Blocking: call it
    from a worker thread in async code. Where the walls cannot be raised, raises
    ExecutorUnavailable unless `unsafe`, when the code runs behind its limits only."""
    limits = limits or Limits()
    mode = isolation()
    if mode is Isolation.NONE and not unsafe:
        raise ExecutorUnavailable(
            f"the executor cannot raise its walls here ({walls.isolation()[1]})",
            "run where bubblewrap works (root, or user namespaces allowed), or pass --unsafe-executor",
        )
    group = _group(limits)
    try:
        with ExitStack() as stack:
            return _run(stack, code, tests, entry_point, limits, mode, group)
    finally:
        if group is not None:
            group.kill()
            group.remove()


def _group(limits: Limits) -> cgroup.RunGroup | None:
    """The run's control group; None where none can be made, and then the processes'
    own limits bound the run (`Limits.rlimits`)."""
    where = cgroup.hierarchy()
    if where is None:
        return None
    try:
        return cgroup.RunGroup.make(where, limits.memory_mb, limits.processes)
    except OSError:  # the hierarchy took one before: the fallback's limits hold this run
        return None


def run(program: str, limits: Limits | None = None, *, unsafe: bool = False) -> Outcome:
    """Run `program` alone (no tests): it passes when it loads without an error, and
    the output is what it printed."""
    return check(program, "", None, limits, unsafe=unsafe)


# the filter checked as the swarm starts: a socket of any family is refused inside
_READY = (
    "import socket\ntry:\n    socket.socket(socket.AF_UNIX)\nexcept PermissionError:\n    print('ready')\n"
)


def preflight(limits: Limits | None = None, *, unsafe: bool = False) -> None:
    """Before the first call of a stream with code tasks, run a program that only
    prints (behind the walls, once it has seen its socket refused): an executor that
    cannot run code here stops the swarm before it spends, rather than failing every
    code task."""
    program = _READY if isolation() is Isolation.BUBBLEWRAP else "print('ready')\n"
    outcome = run(program, limits, unsafe=unsafe)
    if not outcome.passed or outcome.output.strip() != "ready":
        said = outcome.reason if not outcome.passed else "the seccomp filter did not refuse a socket"
        raise ExecutorUnavailable(
            f"the executor cannot run code here ({outcome.isolation}): {said}",
            "see `dagmca doctor` and the Swarm guide's section on the executor",
        )


def _unnamed(stack: ExitStack, text: str | None = None) -> BinaryIO:
    f = stack.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (closed by the stack)
    if text is not None:
        f.write(text.encode("utf-8"))
        f.seek(0)
    return f


def _spawn(
    stack: ExitStack, role: str, settings: dict[str, object], fds: list[int], limits: Limits, mode: Isolation
) -> _Sandboxed:
    output = _unnamed(stack)
    arguments = walls.interpreter(role, json.dumps(settings))
    env: dict[str, str] = {}  # bwrap sets the sandbox's own
    if mode is Isolation.BUBBLEWRAP:
        binary = walls.bwrap()
        assert binary is not None  # isolation() found it
        seccomp = walls.seccomp_pipe()
        stack.callback(os.close, seccomp)
        command, fds, cwd = walls.command(binary, limits, seccomp, arguments), [*fds, seccomp], None
    else:
        cwd = tempfile.mkdtemp(prefix="dagmca-unsafe-")
        stack.callback(shutil.rmtree, cwd, True)
        command = [root.root().executable, *arguments]
        env = {**walls.ENVIRONMENT, "HOME": cwd, "TMPDIR": cwd}
    popen = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, pass_fds=fds,
        env=env, cwd=cwd, start_new_session=True,
    )  # fmt: skip
    process = _Sandboxed(popen, output)
    stack.callback(process.kill)  # on every way out, an error's too
    return process


def _run(
    stack: ExitStack,
    code: str,
    tests: str,
    entry_point: str | None,
    limits: Limits,
    mode: Isolation,
    group: cgroup.RunGroup | None,
) -> Outcome:
    started = time.monotonic()
    code_file, tests_file = _unnamed(stack, code), _unnamed(stack, tests)
    calls, replies, verdict = os.pipe(), os.pipe(), os.pipe()
    groups = [os.open(path, os.O_WRONLY | os.O_CLOEXEC) for path in group.procs()] if group else []
    mb = 1024 * 1024
    common = {
        "groups": groups,
        "rlimits": limits.rlimits(group is not None),
        "entry_point": entry_point,
        "memory_mb": limits.memory_mb,
        "output_chars": limits.file_mb * mb,
    }
    held = [*calls, *replies, *verdict, *groups]
    try:
        answer = _spawn(
            stack, "answer",
            {**common, "code": code_file.fileno(), "calls": calls[0], "replies": replies[1]},
            [*groups, code_file.fileno(), calls[0], replies[1]], limits, mode,
        )  # fmt: skip
        judge = _spawn(
            stack, "judge",
            {**common, "tests": tests_file.fileno(), "calls": calls[1], "replies": replies[0],
             "verdict": verdict[1], "reply_bytes": 8 * limits.file_mb * mb + mb},
            [*groups, tests_file.fileno(), calls[1], replies[0], verdict[1]], limits, mode,
        )  # fmt: skip
    finally:
        for fd in held:  # the processes hold their own copies now
            if fd != verdict[0]:
                os.close(fd)
    stack.callback(os.close, verdict[0])
    deadline = started + limits.wall_seconds
    timed_out = not judge.wait(deadline)
    if timed_out:
        judge.kill()
    said = _verdict(verdict[0])
    if said is not None and said.get("gone"):
        answer.wait(time.monotonic() + 1.0)  # ended by itself: let it say how
    for process in (answer, judge):
        process.kill()
    if group is not None:
        group.kill()
    reason = _reason(said, timed_out, answer, judge, limits, group)
    return Outcome(
        passed=reason is None,
        reason=reason or "passed",
        output=_output(judge, answer, limits.output_chars),
        seconds=round(time.monotonic() - started, 3),
        isolation=mode,
    )


def _verdict(fd: int) -> dict[str, object] | None:
    os.set_blocking(fd, False)
    try:
        data = os.read(fd, 1 << 16)
    except BlockingIOError:
        return None
    try:
        said = json.loads(data)
    except ValueError:
        return None
    return said if isinstance(said, dict) else None


def _answer_ended(answer: _Sandboxed, limits: Limits, group: cgroup.RunGroup | None) -> str:
    """How the answer's process ended, in the task's terms."""
    ended = answer.ended
    code = ended.code if ended else None
    if code == 128 + signal.SIGXCPU or (
        code == 128 + signal.SIGKILL and ended is not None and ended.cpu_seconds >= limits.cpu_seconds
    ):
        return f"it used more than its {limits.cpu_seconds} s of CPU time"
    if group is not None and group.killed_for_memory():
        return f"it used more than its {limits.memory_mb} MB of memory"
    if code in (EXIT_OUTPUT, 128 + signal.SIGXFSZ):
        return f"it wrote more than its {limits.file_mb} MB of output"
    if code == EXIT_LOCKIN:
        return "the sandbox could not lock it in"
    if code is not None and code > 128:
        try:
            return f"it was killed by {signal.Signals(code - 128).name}"
        except ValueError:
            return f"it was killed by signal {code - 128}"
    return f"it exited with code {code}" if code is not None else "it did not end by itself"


def _reason(
    said: dict[str, object] | None,
    timed_out: bool,
    answer: _Sandboxed,
    judge: _Sandboxed,
    limits: Limits,
    group: cgroup.RunGroup | None,
) -> str | None:
    """Why the run failed (None when it passed)."""
    if timed_out:
        return f"ran past its wall time of {limits.wall_seconds:g} s"
    if said is None:
        if group is not None and group.killed_for_memory():
            return f"used more than its {limits.memory_mb} MB of memory"
        started = _head(judge.output).startswith("bwrap:")
        code = judge.ended.code if judge.ended else None
        return (
            "the sandbox could not start"
            if started
            else f"the tests' process ended without a verdict (exit {code})"
        )
    if said.get("passed") is True:
        return None
    reason = str(said.get("reason", "failed"))
    if said.get("gone"):
        return f"{reason}: {_answer_ended(answer, limits, group)}"
    if group is not None and group.killed_for_memory():
        return f"{reason} (a process of the run used more than its {limits.memory_mb} MB of memory)"
    if any(_size(p.output) >= limits.file_mb * 1024 * 1024 for p in (answer, judge)):
        return f"{reason} (it wrote more than its {limits.file_mb} MB of output, which was cut there)"
    return reason


def _size(f: BinaryIO) -> int:
    return os.fstat(f.fileno()).st_size


def _head(f: BinaryIO) -> str:
    f.seek(0)
    return f.read(200).decode("utf-8", "replace")


def _output(judge: _Sandboxed, answer: _Sandboxed, chars: int) -> str:
    """What the tests' process printed (the answer's prints forwarded with each reply),
    then what the answer's process wrote itself (its errors), cut."""
    parts = []
    for process in (judge, answer):
        process.output.seek(0)
        parts.append(process.output.read(chars * 4).decode("utf-8", "replace"))
    return (parts[0] + parts[1])[:chars]
