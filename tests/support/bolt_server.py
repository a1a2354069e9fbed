"""A real Bolt server for tests: ArcadeDB (from the `arcadedb-embedded` wheel) with
its Bolt plugin, on 127.0.0.1, a free port and a temporary folder.

The JVM starts once per test process, so one server serves the whole run; each
test gets its own fresh database. With NEO4J_URI set, the same tests also run
against that server (a scratch database: the tests delete every :Node in it).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dagmca.store.neo4j import BoltTarget, Neo4jStore, connect


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class BoltServer:
    """A running ArcadeDB; `new_target()` creates an empty database and says how to reach it."""

    server: Any
    uri: str
    user: str
    password: str
    _names: itertools.count[int]

    @classmethod
    def start(cls, root: Path) -> BoltServer:
        from arcadedb_embedded.server import ArcadeDBServer

        password = "pw-" + secrets.token_hex(8)
        bolt, http = free_port(), free_port()
        server = ArcadeDBServer(
            root_path=str(root),
            root_password=password,
            config={
                "host": "127.0.0.1",
                "bolt_port": bolt,
                "http_port": http,
                "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            },
        )
        server.start()
        return cls(server, f"bolt://127.0.0.1:{bolt}", "root", password, itertools.count(1))

    def new_target(self) -> BoltTarget:
        name = f"db{next(self._names)}"
        self.server.create_database(name)
        return BoltTarget(uri=self.uri, user=self.user, password=self.password, database=name)

    def env(self, target: BoltTarget) -> dict[str, str]:
        """Environment for a `dagmca` subprocess that should use this database."""
        return {
            "NEO4J_USER": self.user,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": target.database or "",
        }

    @classmethod
    @contextlib.contextmanager
    def in_child_process(cls, databases: int) -> Iterator[list[BoltTarget]]:
        """The server in a process of its own, as a real Neo4j would be (benchmarks: a
        JVM inside the measured process competes with it for the interpreter lock), with
        `databases` fresh databases; stopped on exit."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.bolt_server", str(databases)],
            cwd=Path(__file__).resolve().parents[2],  # the repository: `tests` is a package there
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdout is not None
            info = json.loads(proc.stdout.readline())
            yield [BoltTarget(info["uri"], info["user"], info["password"], db) for db in info["databases"]]
        finally:
            if proc.stdin is not None:
                proc.stdin.close()  # the child stops its server when its input ends
            proc.wait(timeout=60)

    def stop(self) -> None:
        self.server.stop()
        import jpype

        # A JVM left running crashes the interpreter at exit next to llama.cpp's threads.
        if jpype.isJVMStarted():
            jpype.shutdownJVM()


# A real Neo4j for the contract suite, read once when the tests are collected: the
# tests themselves run without any NEO4J_* variable (tests/conftest.py).
REAL_NEO4J = {k: v for k, v in os.environ.items() if k.startswith("NEO4J_")}


def real_neo4j_hosts() -> list[str]:
    """The hosts a test of the real Neo4j may connect to (pytest-socket's allow list)."""
    target = real_neo4j_target()
    host = urlsplit(target.uri).hostname if target else None
    return ["127.0.0.1", "::1", "localhost", *([host] if host else [])]


def real_neo4j_target() -> BoltTarget | None:
    uri = REAL_NEO4J.get("NEO4J_URI")
    return BoltTarget.parse(uri, env=REAL_NEO4J) if uri else None


def wiped(target: BoltTarget) -> Neo4jStore:
    store = connect(target)
    store.delete_all()
    return store


if __name__ == "__main__":  # `python -m tests.support.bolt_server N`: see BoltServer.in_child_process
    with tempfile.TemporaryDirectory() as root:
        server = BoltServer.start(Path(root))
        names = [server.new_target().database for _ in range(int(sys.argv[1]))]
        info = {"uri": server.uri, "user": server.user, "password": server.password, "databases": names}
        print(json.dumps(info), flush=True)
        sys.stdin.read()
        server.stop()
