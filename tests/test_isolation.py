"""Tests are kept off real services by construction, not by convention: no setting of
the developer's shell reaches them, and no connection leaves this machine, from the
test process or from a process it starts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from pytest_socket import SocketConnectBlockedError

from tests.support.sandbox import process_env

ELSEWHERE = ("203.0.113.7", 9)  # TEST-NET-3: never a real host


def test_no_dagmca_neo4j_or_openai_setting_reaches_a_test() -> None:
    leaked = [k for k in os.environ if k.startswith(("DAGMCA_", "NEO4J_", "OPENAI_"))]
    assert leaked == []


def test_a_started_process_gets_only_the_listed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_TOKEN", "secret")
    env = process_env({"OPENAI_API_KEY": "given by the test"})
    assert "SOME_TOKEN" not in env and env["OPENAI_API_KEY"] == "given by the test"


@pytest.mark.filterwarnings("ignore:A test tried to use socket")  # the refusal is the point
def test_the_test_process_cannot_leave_this_machine() -> None:
    with pytest.raises(SocketConnectBlockedError):
        socket.create_connection(ELSEWHERE, timeout=1)


def test_a_started_process_cannot_leave_this_machine_but_reaches_it() -> None:
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection({ELSEWHERE!r}, timeout=1)\n"
        "except ConnectionRefusedError as exc:\n"
        "    print('refused:', exc)\n"
        "server = socket.socket(); server.bind(('127.0.0.1', 0)); server.listen()\n"
        "socket.create_connection(server.getsockname(), timeout=1).close()\n"
        "print('loopback ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=process_env())
    assert proc.returncode == 0, proc.stderr
    assert "refused: tests allow no network beyond 127.0.0.1" in proc.stdout
    assert "loopback ok" in proc.stdout
