"""The swarm's executor holds: scripted solutions that each try one harmful thing
fail within the timeout, write nothing outside their folder, and leave no process."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import cast

import pytest

from dagmca.swarm import sandbox
from dagmca.swarm.sandbox import Limits, Outcome, run
from dagmca.swarm.tasks import SwarmTask, program
from tests.support.executor import HARMFUL, leftovers

LIMITS = Limits(cpu_seconds=2, wall_seconds=8, memory_mb=256, processes=16)
pytestmark = pytest.mark.skipif(os.name != "posix", reason="the executor needs POSIX")


# each wall alone where it can be: the kernel's (namespaces, no audit hook), the audit
# hook's (guarded: no namespace), and both together (what a swarm runs with)
WALLS = {"kernel": ("namespaces", False), "hook": ("guarded", True), "both": ("namespaces", True)}


@pytest.mark.parametrize("walls", list(WALLS))
@pytest.mark.parametrize("kind", sorted(HARMFUL))
@pytest.mark.slow  # a looping child runs out its CPU seconds
def test_the_sandbox_holds(kind: str, walls: str, tmp_path: Path) -> None:
    mode, hook = WALLS[walls]
    if mode == "namespaces" and sandbox.isolation() != "namespaces":
        pytest.skip("no namespaces on this kernel")
    if walls == "hook" and kind.startswith("escape-session") and os.geteuid() != 0:
        pytest.skip("as a user, a child that leaves its session needs the PID namespace to be reaped")
    name = f"escaped-{kind}-{os.getpid()}"
    # /tmp is writable by everyone: only the sandbox keeps the child out of it
    target = Path("/tmp") / name
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    program = HARMFUL[kind].format(target=str(target), name=name, port=server.getsockname()[1])
    before = set(Path("/tmp").iterdir())
    started = time.monotonic()
    outcome = run(program, LIMITS, mode=cast(sandbox.Isolation, mode), hook=hook)
    try:
        reached = server.accept()[0]
        reached.close()
    except TimeoutError:
        reached = None
    server.close()
    escaped = target.exists()
    target.unlink(missing_ok=True)
    assert reached is None, "the child reached a server on 127.0.0.1"
    assert not outcome.passed, outcome.output
    assert time.monotonic() - started < LIMITS.wall_seconds + 3
    assert not escaped
    assert not any(p.name.startswith("escaped-") for p in set(Path("/tmp").iterdir()) - before)
    assert leftovers() == []


def test_a_good_program_runs_and_its_folder_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the folders this run makes, known as they are made: another worker's sandbox may
    # come and go in /tmp meanwhile
    made: list[Path] = []
    mkdtemp = tempfile.mkdtemp

    def recorded(*args: object, **kwargs: object) -> str:
        made.append(Path(mkdtemp(*args, **kwargs)))  # type: ignore[call-overload]
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    outcome = run("import math\nopen('note.txt', 'w').write('x')\nprint(math.factorial(5))\n", LIMITS)
    assert outcome.passed, outcome.output
    assert outcome.output.strip() == "120"
    assert made and all(p.name.startswith("dagmca-sandbox-") for p in made)
    assert [p for p in made if p.exists()] == []


def test_output_is_cut_and_the_environment_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGMCA_SECRET_FOR_TEST", "hunter2")
    outcome = run(
        "import os\nprint(sorted(os.environ))\nprint(os.environ.get('DAGMCA_SECRET_FOR_TEST'))\n"
        "print('y' * 100000)\n",
        Limits(output_chars=300),
    )
    assert "hunter2" not in outcome.output
    assert len(outcome.output) == 300


@pytest.mark.skipif(os.geteuid() != 0, reason="checks the drop from root")
def test_as_root_the_child_runs_unprivileged() -> None:
    outcome = run("import os\nprint(os.getuid(), os.getgid(), os.getgroups())\n", LIMITS)
    assert outcome.output.split("\n")[0] == f"{sandbox.NOBODY} {sandbox.NOBODY} []"


def test_a_failing_test_is_a_failure_with_its_reason() -> None:
    outcome = run("def f(x):\n    return x\nassert f(1) == 2, 'f(1) should be 2'\n", LIMITS)
    assert not outcome.passed
    assert "f(1) should be 2" in outcome.reason


def test_an_executor_that_cannot_run_code_stops_before_any_call() -> None:
    sandbox.preflight()
    with pytest.raises(sandbox.ExecutorUnavailable, match="cannot run code here"):
        sandbox.preflight(Limits(wall_seconds=0.001))  # too short for the interpreter to start


@pytest.mark.parametrize(
    "exit_call", ["import sys\nsys.exit(0)", "import os\nos._exit(0)", "raise SystemExit"]
)
def test_an_answer_that_exits_early_skips_no_test(exit_call: str) -> None:
    task = SwarmTask(id="t1", type="logic", prompt="return x", tests="assert f(1) == 2", entry_point="f")
    outcome = run(program(task, f"{exit_call}\ndef f(x):\n    return x\n"), LIMITS)
    assert outcome.exit_code == 0
    assert not outcome.passed
    assert outcome.reason.startswith("exited before the end of its program")
    right = run(program(task, "def f(x):\n    return 2\n"), LIMITS)
    assert right.passed, right.output
    assert right.output == ""


def test_a_real_time_signal_is_named_by_its_number() -> None:
    outcome = Outcome(
        passed=False, exit_code=-40, timed_out=False, output="", seconds=0.1, isolation="guarded"
    )
    assert outcome.reason == "killed by signal 40"
    assert Outcome(False, -9, False, "", 0.1, "guarded").reason == "killed by SIGKILL"


def namespaces_only() -> None:
    if sandbox.isolation() != "namespaces":
        pytest.skip("no namespaces on this kernel")


def test_the_kernel_keeps_every_folder_but_its_own_read_only() -> None:
    namespaces_only()
    # a folder any user may write, outside the usual world-writable ones: only a
    # read-only root keeps the child out when the audit hook is off
    base = Path("/run") if os.access("/run", os.W_OK) else Path.home()
    folder = base / f"dagmca-open-{os.getpid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    try:
        program = f"import os\nos.chdir({str(folder)!r})\nopen('escaped', 'w').write('x')\n"
        outcome = run(program, LIMITS, mode="namespaces", hook=False)
        assert not outcome.passed
        assert not (folder / "escaped").exists()
    finally:
        (folder / "escaped").unlink(missing_ok=True)
        folder.rmdir()


def test_the_child_sees_its_own_processes_and_the_standard_library() -> None:
    namespaces_only()
    program = (
        "import hashlib, queue, collections, itertools, functools, math, re, json, os\n"
        "print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    )
    outcome = run(program, LIMITS)
    assert outcome.passed, outcome.output
    assert int(outcome.output.split()[0]) < 5  # the PID namespace's, not the host's


def test_the_work_folder_has_a_size_limit() -> None:
    namespaces_only()
    program = "for i in range(8):\n    open(f'f{i}', 'wb').write(b'x' * 1024 * 1024)\nprint('all written')\n"
    outcome = run(program, Limits(work_mb=4, wall_seconds=8), mode="namespaces", hook=False)
    assert not outcome.passed
    assert "all written" not in outcome.output


def test_without_namespaces_code_tasks_need_an_explicit_opt_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagmca.api import swarm

    monkeypatch.setattr(sandbox, "isolation", lambda: "guarded")
    code = {"id": "c1", "type": "code", "prompt": "f", "tests": "assert f() == 1", "entry_point": "f"}
    reference = {"id": "a1", "type": "add", "question": "What is 2 + 3?", "answer": "5"}
    mixed, plain = tmp_path / "mixed.jsonl", tmp_path / "plain.jsonl"
    mixed.write_text(json.dumps(code) + "\n" + json.dumps(reference) + "\n", encoding="utf-8")
    plain.write_text(json.dumps(reference) + "\n", encoding="utf-8")
    with pytest.raises(sandbox.ExecutorUnavailable, match="no namespaces can be made here"):
        swarm(mixed, store=tmp_path / "s.db", settings={"llm": "fake"})
    assert swarm(plain, store=tmp_path / "s.db", settings={"llm": "fake"}).attempted_now == 1
    opted = swarm(mixed, store=tmp_path / "s.db", settings={"llm": "fake"}, unsafe_executor=True)
    assert opted.attempted_now == 2


# the audit hook's old gaps: each tries to write or change a file outside the folder
# that the child's own uid may write (world-writable, in /tmp)
BYPASSES = {
    "chdir": "import os\nos.chdir('/tmp')\nopen({name!r}, 'w').write('escaped')\n",
    "dir-fd": (
        "import os\nd = os.open('/tmp', os.O_RDONLY)\n"
        "os.write(os.open({name!r}, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d), b'escaped')\n"
    ),
    "rename-to": "import os\nopen('a', 'w').write('escaped')\nos.rename('a', {target!r})\n",
    "replace-to": "import os\nopen('a', 'w').write('escaped')\nos.replace('a', {target!r})\n",
    "link-to": "import os\nopen('a', 'w').write('escaped')\nos.link('a', {target!r})\n",
    "truncate": "import os\nos.truncate({open_file!r}, 0)\n",
    "utime": "import os, time\ntime.sleep(0.05)\nos.utime({open_file!r})\n",
    "rewrite-tables": (
        "import __main__, os\n__main__._REFUSED = ()\n__main__._CHANGES = ()\n"
        "assert os.system('echo escaped > {target}') == 0, 'not written'\n"
    ),
}


@pytest.mark.parametrize("walls", list(WALLS))
@pytest.mark.parametrize("kind", sorted(BYPASSES))
def test_the_hooks_old_gaps_are_closed(kind: str, walls: str) -> None:
    mode, hook = WALLS[walls]
    if mode == "namespaces" and sandbox.isolation() != "namespaces":
        pytest.skip("no namespaces on this kernel")
    name = f"escaped-{kind}-{os.getpid()}"
    target = Path("/tmp") / name
    open_file = Path("/tmp") / f"open-{kind}-{os.getpid()}"
    open_file.write_text("data")
    open_file.chmod(0o666)  # the child may write it by its permissions: only the walls stop it
    stamp = open_file.stat().st_mtime
    program = BYPASSES[kind].format(target=str(target), name=name, open_file=str(open_file))
    try:
        outcome = run(program, LIMITS, mode=cast(sandbox.Isolation, mode), hook=hook)
        assert not outcome.passed, outcome.output
        assert not target.exists()
        assert open_file.read_text() == "data"
        assert open_file.stat().st_mtime == stamp
    finally:
        target.unlink(missing_ok=True)
        open_file.unlink(missing_ok=True)


def test_a_folder_whose_subfolder_was_locked_is_removed() -> None:
    """A program that runs `chmod 0` on a subfolder leaves nothing behind. Root may
    remove it anyway, so as root the removal is tried as `nobody`, in a fork."""
    base = Path(tempfile.mkdtemp(prefix="dagmca-remove-"))
    try:
        if os.geteuid() == 0:
            os.chown(base, sandbox.NOBODY, sandbox.NOBODY)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    os.setgroups([])
                    os.setgid(sandbox.NOBODY)
                    os.setuid(sandbox.NOBODY)
                    code = _lock_then_remove(base)
                finally:
                    os._exit(code)
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, "the folder was left"
        else:
            assert _lock_then_remove(base) == 0, "the folder was left"
    finally:
        if base.exists():
            for folder, _, _ in os.walk(base):
                os.chmod(folder, 0o700)
            shutil.rmtree(base)


def _lock_then_remove(base: Path) -> int:
    (base / "sub" / "deep").mkdir(parents=True)
    (base / "sub" / "deep" / "f").write_text("x")
    (base / "sub" / "deep").chmod(0)
    (base / "sub").chmod(0)
    sandbox.remove_tree(base)
    return 1 if base.exists() else 0
