"""The executor's walls, each tried as an attacker would and checked from outside the
sandbox: a wrong answer that fakes a pass, a listener that must not be reached, a file
that must not appear, a process that must not outlive its run, a SysV segment that must
not exist afterwards, the memory of the run's processes together, a host file that must
not be read. Then the limits, each named in the reason, and honest answers that pass."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from dagmca.executor import Limits, Outcome, check
from tests.support.executor import FRESH, Watch, remove_shm, shm_keys

LIMITS = Limits(cpu_seconds=2, wall_seconds=8, memory_mb=256, processes=16)
WRONG = "def f(x):\n    return 0\n"
TESTS = "assert f(1) == 2\n"
PROJECT_MARK = "dagmca-walls-test-file-marker"  # this file's own text: the project's source
pytestmark = pytest.mark.skipif(os.name != "posix", reason="the executor needs POSIX")


def attempt(code: str, tests: str = TESTS, limits: Limits = LIMITS) -> Outcome:
    return check(code, tests, "f", limits)


# a wrong answer (f(1) is 0, the tests want 2) with one way each of faking a pass: by
# the nonce a verdict printed by the answer's own process would need (found in a
# caller's frame, in the arguments, /proc/self/cmdline or the config file), or by
# getting round the tests' comparisons from inside the process that runs them
_FORGE = (
    "import json, os, sys\n"
    "def forge(nonce):\n"
    "    sys.stdout.flush()\n"
    "    os.write(1, ('\\n%s\\n' % nonce).encode())\n"
    "    os._exit(0)\n"
)
FAKES = {
    "nonce-in-a-frame": _FORGE
    + ("try:\n    forge(sys._getframe(1).f_locals['config']['nonce'])\nexcept Exception:\n    pass\n"),
    "nonce-by-argv": _FORGE
    + ("try:\n    forge(json.load(open(sys.orig_argv[-1]))['nonce'])\nexcept Exception:\n    pass\n"),
    "nonce-by-cmdline": _FORGE
    + (
        "try:\n    path = open('/proc/self/cmdline', 'rb').read().split(b'\\0')[-2]\n"
        "    forge(json.load(open(path))['nonce'])\nexcept Exception:\n    pass\n"
    ),
    "nonce-in-the-config-file": _FORGE
    + (
        "import glob\nfor path in ['../config.json', *glob.glob('/tmp/dagmca-sandbox-*/config.json')]:\n"
        "    try:\n        forge(json.load(open(path))['nonce'])\n    except Exception:\n        pass\n"
    ),
    "always-equal": "class Yes:\n    def __eq__(self, other):\n        return True\n",
    "trace-hook": (
        "import sys\ndef hook(frame, event, arg):\n    found = frame.f_globals.get('check')\n"
        "    if callable(found) and found.__name__ == 'check':\n"
        "        frame.f_globals['check'] = lambda *args: None\n    return hook\n"
        "sys.settrace(hook)\nsys._getframe().f_trace = hook\n"
    ),
    "replaced-builtin": "import builtins\nbuiltins.abs = lambda x: 0\n",
    "exit-early": "import os\nos._exit(0)\n",
    # StopIteration rebuilt as itself would end the tests' own iteration: map stops,
    # and all() of nothing is True
    "stop-iteration": "class Never:\n    pass\n",
}
FAKE_TESTS = {
    "always-equal": (WRONG.replace("return 0", "return Yes()"), TESTS),
    "trace-hook": (WRONG, "def check(candidate):\n    assert candidate(1) == 2\n\n\ncheck(f)\n"),
    "replaced-builtin": (WRONG.replace("return 0", "return 5.0"), "assert abs(f(1) - 2.0) < 1e-9\n"),
    "stop-iteration": (WRONG.replace("return 0", "raise StopIteration"), "assert all(map(f, [1, 2, 3]))\n"),
}


@pytest.mark.parametrize("kind", sorted(FAKES))
def test_a_wrong_answer_cannot_fake_a_pass(kind: str) -> None:
    answer, tests = FAKE_TESTS.get(kind, (WRONG, TESTS))
    outcome = attempt(FAKES[kind] + answer, tests)
    assert not outcome.passed, outcome


class Listener:
    """A pathname unix socket under the host's /tmp, open to every user, and a TCP
    one on 127.0.0.1: whether anything reached either."""

    def __init__(self) -> None:
        self.path = Path("/tmp") / f"dagmca-listener-{os.getpid()}.sock"
        self.path.unlink(missing_ok=True)
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.path))
        self.path.chmod(0o777)
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.reached: list[str] = []
        self.threads = [
            threading.Thread(target=self._accept, args=(s,), daemon=True) for s in (self.unix, self.tcp)
        ]
        for s, thread in zip((self.unix, self.tcp), self.threads, strict=True):
            s.listen()
            s.settimeout(0.2)
            thread.start()
        self.stop = False

    def _accept(self, server: socket.socket) -> None:
        while not getattr(self, "stop", False):
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            self.reached.append(str(server.family))
            conn.close()

    def close(self) -> list[str]:
        time.sleep(0.3)  # a connection made at the run's end is accepted
        self.stop = True
        for thread in self.threads:
            thread.join()
        self.unix.close()
        self.tcp.close()
        self.path.unlink(missing_ok=True)
        return self.reached


CONNECT = {
    "unix": "import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r}); s.sendall(b'x')",
    "tcp": "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')",
}


@pytest.mark.parametrize("how", ["fresh-interpreter", "in-process"])
@pytest.mark.parametrize("family", sorted(CONNECT))
def test_no_listener_of_the_host_is_reached(family: str, how: str) -> None:
    listener = Listener()
    try:
        line = CONNECT[family].format(path=str(listener.path), port=listener.port)
        attack = (
            f"{FRESH}fresh({line!r})\n"
            if how == "fresh-interpreter"
            else f"try:\n    {line}\nexcept OSError:\n    pass\n"
        )
        attempt(attack + "def f(x):\n    return 2\n")
    finally:
        reached = listener.close()
    assert reached == []


# setsid() and a long sleep: in the answer's own process (the sandbox's first), or in
# a process it forks, with and without children of their own
SESSION_ESCAPES = {
    "itself": "import os, time\nos.setsid()\ntime.sleep(60)\n",
    "itself-with-children": (
        "import os, time\nos.setsid()\nfor _ in range(3):\n    if os.fork() == 0:\n        os.setsid()\n"
        "        time.sleep(60)\n        os._exit(0)\ntime.sleep(60)\n"
    ),
    "forked": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n    os._exit(0)\n"
        "time.sleep(0.5)\n"
    ),
    "forked-with-children": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    for _ in range(3):\n"
        "        if os.fork() == 0:\n            os.setsid()\n"
        "            time.sleep(60)\n            os._exit(0)\n"
        "    time.sleep(60)\n    os._exit(0)\ntime.sleep(0.5)\n"
    ),
}
SHORT = LIMITS.model_copy(update={"wall_seconds": 2.0})


@pytest.mark.parametrize(
    "kind",
    # the answer's own process sleeps: the run waits out its wall time
    [pytest.param(k, marks=pytest.mark.slow) if k.startswith("itself") else k for k in SESSION_ESCAPES],
)
def test_no_process_outlives_its_run(kind: str) -> None:
    with Watch() as watch:
        outcome = attempt(SESSION_ESCAPES[kind] + "def f(x):\n    return 2\n", limits=SHORT)
    assert len(watch.seen) > 0, "the watch saw no process of the run"
    assert watch.survivors() == []
    if kind.startswith("itself"):
        assert outcome.reason == "ran past its wall time of 2 s"


@pytest.mark.slow  # the first run waits out its wall time
def test_a_run_that_spends_its_process_budget_leaves_it_whole_for_the_next() -> None:
    spend = (
        "import os, time\nos.setsid()\nfor _ in range(40):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        os.setsid()\n        time.sleep(60)\n"
        "        os._exit(0)\ntime.sleep(60)\n"
    )
    with Watch() as watch:
        attempt(spend, limits=SHORT)
        honest = attempt(POOL, "assert f(3) == 9\n")
    watch.survivors()
    assert honest.passed, honest.reason


def test_sysv_shared_memory_does_not_outlive_its_run() -> None:
    key = 0x5EED0000 + (os.getpid() & 0xFFFF)
    make = f"import ctypes; ctypes.CDLL(None).shmget({key}, 300 * 1024 * 1024, 0o1000 | 0o600)"
    try:
        attempt(f"{FRESH}fresh({make!r})\n{make}\ndef f(x):\n    return 2\n")
        assert key not in shm_keys()
    finally:
        remove_shm(key)


@pytest.mark.slow  # the run holds its forks' memory for the watch to see
def test_memory_is_bounded_for_the_run_as_a_whole() -> None:
    forks = (
        "import os, time\nfor _ in range(8):\n    if os.fork() == 0:\n        block = b'x' * (120 << 20)\n"
        "        time.sleep(3)\n        os._exit(0)\ntime.sleep(2.5)\ndef f(x):\n    return 2\n"
    )
    with Watch() as watch:
        attempt(forks)
    watch.survivors()
    # the run's own processes, and the two interpreters as they start (before they
    # join the run's group)
    assert watch.peak_mb < LIMITS.memory_mb + 100, watch.peak_mb


def test_host_files_are_out_of_reach() -> None:
    secret = Path("/tmp") / f"dagmca-secret-{os.getpid()}.txt"
    secret.write_text("the-host-secret-token")
    secret.chmod(0o644)
    try:
        reads = (
            f"for path in [{str(secret)!r}, {str(Path(__file__).resolve())!r}]:\n"
            "    try:\n        print(open(path).read())\n"
            "    except OSError as exc:\n        print(type(exc).__name__)\n"
            f"def f(x):\n    return open({str(secret)!r}).read()\n"
        )
        outcome = attempt(reads)
    finally:
        secret.unlink()
    seen = outcome.output + outcome.reason
    assert "the-host-secret-token" not in seen
    assert PROJECT_MARK not in seen


def test_nothing_is_written_outside_through_a_shell() -> None:
    target = Path("/tmp") / f"escaped-shell-{os.getpid()}"
    shell = f"import os; os.execv('/bin/sh', ['sh', '-c', 'echo escaped > {target}'])"
    try:
        attempt(
            f"{FRESH}fresh({shell!r})\nimport os\nos.system('echo escaped > {target}')\n"
            "def f(x):\n    return 2\n"
        )
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.slow  # the other run stays for the second to look
def test_runs_cannot_see_each_other() -> None:
    token = f"the-other-run-{os.getpid()}"
    other = (
        f"open('note.txt', 'w').write({token!r})\nimport time\ntime.sleep(3)\n# {token}\n"
        "def f(x):\n    return 2\n"
    )
    first = threading.Thread(target=attempt, args=(other,))
    first.start()
    time.sleep(1.0)
    look = (
        "import glob\npaths = [d + '/work/main.py' for d in glob.glob('/tmp/dagmca-sandbox-*')]\n"
        "paths += glob.glob('/work/**', recursive=True) + glob.glob('/tmp/*') + glob.glob('/tmp/*/*')\n"
        "for path in paths:\n"
        "    try:\n        text = open(path).read()\n    except (OSError, ValueError):\n        continue\n"
        "    if 'the-other-run-' in text:\n        print(path, text)\n"
        "def f(x):\n    return 2\n"
    )
    seen = attempt(look)
    first.join()
    assert token not in seen.output + seen.reason


@pytest.mark.slow  # the loop runs out its CPU seconds
def test_a_loop_fails_naming_the_cpu_limit() -> None:
    outcome = attempt("def f(x):\n    while True:\n        pass\n")
    assert not outcome.passed
    assert f"{LIMITS.cpu_seconds} s of CPU time" in outcome.reason


def test_a_memory_hog_fails_naming_the_memory_limit() -> None:
    hogs = {
        "one block": "def f(x):\n    return len(bytearray(1 << 30))\n",
        "many pieces": "def f(x):\n    kept = []\n    while True:\n        kept.append(b'x' * (1 << 20))\n",
    }
    for code in hogs.values():
        outcome = attempt(code)
        assert not outcome.passed
        assert f"{LIMITS.memory_mb} MB of memory" in outcome.reason, outcome.reason


def test_a_huge_output_fails_naming_the_output_limit() -> None:
    for code in (
        "def f(x):\n    print('y' * (4 << 20))\n",
        "import os\ndef f(x):\n    os.write(1, b'y' * (4 << 20))\n",
    ):
        outcome = attempt(code)
        assert not outcome.passed
        assert f"{LIMITS.file_mb} MB of output" in outcome.reason, outcome.reason
        assert len(outcome.output) <= LIMITS.output_chars


POOL = (
    "from concurrent.futures import ThreadPoolExecutor\n"
    "def f(x):\n    with ThreadPoolExecutor(max_workers=4) as pool:\n"
    "        return sum(pool.map(abs, range(-x, x)))\n"
)
HONEST = {
    "plain": ("def f(x):\n    return x * 2\n", "assert f(1) == 2\nassert f(21) == 42\n"),
    "thread-pool": (POOL, "assert f(3) == 9\n"),
    "100-mb": (
        "def f(x):\n    block = bytearray(100 * 1024 * 1024)\n    return len(block) // x\n",
        "assert f(1) == 100 * 1024 * 1024\n",
    ),
}


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_answers_pass(kind: str) -> None:
    code, tests = HONEST[kind]
    outcome = attempt(code, tests)
    assert outcome.passed, outcome.reason
