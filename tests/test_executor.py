"""The executor as the swarm uses it: what the sandbox holds, how the tests reach the
answer (only data crosses), the reasons a run fails for, and what it leaves behind."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from dagmca.executor import (
    ExecutorUnavailable,
    Isolation,
    Limits,
    cgroup,
    check,
    preflight,
    root,
    run,
    supervisor,
    walls,
)
from dagmca.executor.report import Wall, walls_here
from dagmca.swarm.tasks import SwarmTask
from tests.support.executor import leftovers

LIMITS = Limits(cpu_seconds=2, wall_seconds=8, memory_mb=256, processes=16)
pytestmark = pytest.mark.skipif(os.name != "posix", reason="the executor needs POSIX")


def walled() -> None:
    if supervisor.isolation() is not Isolation.BUBBLEWRAP:
        pytest.skip("bubblewrap cannot start here")


def test_a_run_leaves_no_file_group_or_process(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    mkdtemp = tempfile.mkdtemp

    def recorded(*args: object, **kwargs: object) -> str:
        made.append(mkdtemp(*args, **kwargs))  # type: ignore[call-overload]
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    outcome = run("import math\nopen('note.txt', 'w').write('x')\nprint(math.factorial(5))\n", LIMITS)
    assert outcome.passed, outcome.reason
    assert outcome.output.strip() == "120"
    assert [p for p in made if os.path.exists(p)] == []
    where = cgroup.hierarchy()
    if where is not None:
        mine = f"dagmca-run-{os.getpid()}-"
        assert [p for p in {where.memory, where.pids} for q in p.iterdir() if q.name.startswith(mine)] == []
    assert leftovers() == []


def test_the_sandbox_holds_only_the_interpreter_behind_every_wall() -> None:
    walled()
    probe = (
        "import os, json, socket\n"
        "names = ('user', 'pid', 'net', 'ipc', 'uts', 'cgroup')\n"
        "ns = {n: os.readlink('/proc/self/ns/' + n) for n in names}\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "try:\n    socket.socket(socket.AF_UNIX)\n    refused = False\n"
        "except PermissionError:\n    refused = True\n"
        "print(json.dumps({'ns': ns, 'seccomp': status['Seccomp'].strip(),\n"
        "    'caps': status['CapEff'].strip(),\n"
        "    'uid': os.getuid(), 'gid': os.getgid(), 'root': sorted(os.listdir('/')), 'cwd': os.getcwd(),\n"
        "    'env': sorted(os.environ), 'pids': len([p for p in os.listdir('/proc') if p.isdigit()]),\n"
        "    'socket_refused': refused, 'host': os.uname().nodename}))\n"
    )
    outcome = run(probe, LIMITS)
    assert outcome.passed, outcome.reason
    seen = json.loads(outcome.output)
    for name, inside in seen["ns"].items():
        assert inside != os.readlink(f"/proc/self/ns/{name}"), name
    assert seen["seccomp"] == "2" and seen["socket_refused"]
    assert int(seen["caps"], 16) == 0
    assert (seen["uid"], seen["gid"]) == (walls.UID, walls.UID)
    assert not {"tmp", "home", "run", "var", "srv", "mnt", "opt", "media"} & set(seen["root"])
    assert seen["cwd"] == walls.WORK
    assert seen["pids"] < 5  # the PID namespace's own
    assert seen["host"] == "sandbox"


def test_nothing_of_the_host_is_in_the_root_but_the_interpreters_files() -> None:
    walled()
    laid = root.root()
    assert all(not f.startswith(("/tmp", "/home", "/run", "/var", "/work")) for f in laid.folders)
    outcome = run("import os\nprint(sorted(os.listdir('/etc')) if os.path.isdir('/etc') else [])\n", LIMITS)
    assert outcome.passed, outcome.reason
    assert set(json.loads(outcome.output.replace("'", '"'))) <= {"ld.so.cache"}


def test_a_run_killed_as_its_sandboxes_start_leaves_no_process() -> None:
    """bwrap's child waits for bwrap to finish setting it up, and dies with bwrap only
    after: a run ended in that moment must still take it."""
    for _ in range(20):
        assert not run("print('ready')\n", Limits(wall_seconds=0.001)).passed
    assert leftovers() == []


def test_output_is_cut_and_the_environment_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGMCA_SECRET_FOR_TEST", "hunter2")
    outcome = run(
        "import os\nprint(sorted(os.environ))\nprint(os.environ.get('DAGMCA_SECRET_FOR_TEST'))\n"
        "print('y' * 100000)\n",
        Limits(output_chars=300),
    )
    assert "hunter2" not in outcome.output
    assert len(outcome.output) == 300


def test_a_failing_test_is_named_by_its_line() -> None:
    outcome = check(
        "def f(x):\n    return x\n", "assert f(0) == 0\nassert f(1) == 2, 'f(1) should be 2'\n", "f", LIMITS
    )
    assert not outcome.passed
    assert (
        outcome.reason == "a test failed at line 2: assert f(1) == 2, 'f(1) should be 2' (f(1) should be 2)"
    )


def test_the_tests_see_the_answers_values_exceptions_and_prints() -> None:
    code = (
        "import math\n"
        "def f(kind):\n"
        "    if kind == 'raise':\n        raise ValueError('no such kind')\n"
        "    if kind == 'print':\n        print('hello from the answer')\n        return None\n"
        "    return (1, 'two', [3.5, None, True], {4: {5}, 'six': frozenset({7})}, math.inf)\n"
    )
    tests = (
        "import contextlib, io, math\n"
        "expected = (1, 'two', [3.5, None, True], {4: {5}, 'six': frozenset({7})}, math.inf)\n"
        "assert candidate('data') == expected\n"
        "assert type(f('data')) is tuple\n"
        "try:\n    f('raise')\nexcept ValueError as exc:\n    assert str(exc) == 'no such kind'\n"
        "else:\n    raise AssertionError('no ValueError')\n"
        "out = io.StringIO()\nwith contextlib.redirect_stdout(out):\n    f('print')\n"
        "assert out.getvalue() == 'hello from the answer\\n'\n"
    )
    outcome = check(code, tests, "f", LIMITS)
    assert outcome.passed, outcome.reason


def test_a_check_function_gets_the_proxy() -> None:
    task = SwarmTask(
        id="t", type="logic", prompt="double", tests="def check(candidate):\n    assert candidate(2) == 4\n",
        entry_point="double",
    )  # fmt: skip
    assert check("def double(x):\n    return 2 * x\n", task.test_code(), "double", LIMITS).passed
    assert not check("def double(x):\n    return x\n", task.test_code(), "double", LIMITS).passed


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("def f(x):\n    return object()\n", "the answer returned a object from f(1), which is not data"),
        ("def f(x):\n    return 1 / 0\n", "the answer raised ZeroDivisionError: division by zero in f(1)"),
        ("def g(x):\n    return 2\n", "the answer's code raised NameError: the answer defines no function f"),
        ("def f(x) return 2\n", "the answer's code raised SyntaxError: "),
        (
            "import sys\nsys.exit(0)\ndef f(x):\n    return 2\n",
            "the answer exited as it loaded, before any test ran",
        ),
        (
            "import os\nos._exit(0)\ndef f(x):\n    return 2\n",
            "the answer's process ended before it was ready: it exited with code 0",
        ),
        (
            "import socket\ndef f(x):\n    socket.socket()\n",
            "the answer raised PermissionError: [Errno 1] Operation not permitted "
            "(a call the sandbox refuses)",
        ),
    ],
)
def test_a_failure_says_why_in_the_tasks_terms(code: str, says: str) -> None:
    outcome = check(code, "assert f(1) == 2\n", "f", LIMITS)
    assert not outcome.passed
    assert outcome.reason.startswith(says), outcome.reason


def test_the_tests_may_pass_only_data() -> None:
    outcome = check("def f(g):\n    return g(1)\n", "assert f(lambda x: x) == 1\n", "f", LIMITS)
    assert not outcome.passed
    assert "something that is not data" in outcome.reason


def test_the_work_folder_has_a_size_limit() -> None:
    walled()
    program = "for i in range(8):\n    open(f'f{i}', 'wb').write(b'x' * 1024 * 1024)\nprint('all written')\n"
    outcome = run(program, Limits(work_mb=4, wall_seconds=8))
    assert not outcome.passed
    assert "No space left on device" in outcome.reason, outcome.reason


def test_preflight_passes_here_and_stops_an_executor_that_cannot_run() -> None:
    preflight()
    with pytest.raises(ExecutorUnavailable, match="cannot run code here"):
        preflight(Limits(wall_seconds=0.001))  # too short for the interpreter to start


def test_preflight_stops_an_executor_whose_filter_did_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    walled()
    command = walls.command

    def unfiltered(*args: Any) -> list[str]:
        made = command(*args)
        at = made.index("--seccomp")
        return made[:at] + made[at + 2 :]

    monkeypatch.setattr(walls, "command", unfiltered)
    with pytest.raises(ExecutorUnavailable, match="the seccomp filter did not refuse a socket"):
        preflight()


def test_without_bubblewrap_code_runs_only_when_asked_and_unwalled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagmca.api import swarm

    monkeypatch.setattr(supervisor, "isolation", lambda: Isolation.NONE)
    with pytest.raises(ExecutorUnavailable, match="cannot raise its walls here"):
        check("def f():\n    return 1\n", "assert f() == 1\n", "f")
    unwalled = check("def f():\n    return 1\n", "assert f() == 1\n", "f", unsafe=True)
    assert unwalled.passed and unwalled.isolation is Isolation.NONE, unwalled.reason
    code = {"id": "c1", "type": "code", "prompt": "f", "tests": "assert f() == 1", "entry_point": "f"}
    reference = {"id": "a1", "type": "add", "question": "What is 2 + 3?", "answer": "5"}
    mixed, plain = tmp_path / "mixed.jsonl", tmp_path / "plain.jsonl"
    mixed.write_text(json.dumps(code) + "\n" + json.dumps(reference) + "\n", encoding="utf-8")
    plain.write_text(json.dumps(reference) + "\n", encoding="utf-8")
    with pytest.raises(ExecutorUnavailable, match="cannot raise its walls here"):
        swarm(mixed, store=tmp_path / "s.db", settings={"llm": "fake"})
    assert swarm(plain, store=tmp_path / "s.db", settings={"llm": "fake"}).attempted_now == 1
    opted = swarm(mixed, store=tmp_path / "s.db", settings={"llm": "fake"}, options={"unsafe_executor": True})
    assert opted.attempted_now == 2


def test_without_a_control_group_processes_times_address_space_stay_within_the_memory() -> None:
    limits = Limits(memory_mb=512, processes=16)
    alone = limits.rlimits(grouped=False)
    assert alone["RLIMIT_NPROC"][0] * alone["RLIMIT_AS"][0] <= limits.memory_mb * 1024 * 1024
    grouped = limits.rlimits(grouped=True)
    assert grouped["RLIMIT_AS"][0] == limits.memory_mb * 1024 * 1024
    assert grouped["RLIMIT_NPROC"][0] == limits.processes


def test_doctor_lists_each_wall_and_whether_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    walled()
    here = walls_here(LIMITS)
    assert [w.name for w in here] == [
        "mode", "namespaces", "seccomp", "privileges", "root", "memory and processes", "verdict",
    ]  # fmt: skip
    expected = {"memory and processes": cgroup.hierarchy() is not None or os.geteuid() != 0}
    assert [w.name for w in here if w.raised != expected.get(w.name, True)] == []
    assert "unshared: user, pid, net, ipc, uts" in here[1].detail
    monkeypatch.setattr(walls, "isolation", lambda: (Isolation.NONE, "no user namespaces"))
    unwalled = walls_here(LIMITS)
    assert unwalled[0] == Wall("mode", False, "none: no user namespaces")
