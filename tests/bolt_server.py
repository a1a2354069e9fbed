"""A real Bolt server for tests: ArcadeDB (from the `arcadedb-embedded` wheel) with
its Bolt plugin, on 127.0.0.1, a free port and a temporary folder.

The JVM starts once per test process, so one server serves the whole run; each
test gets its own fresh database. With NEO4J_URI set, the same tests also run
against that server (a scratch database: the tests delete every :Node in it).
"""

from __future__ import annotations

import itertools
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

    def stop(self) -> None:
        self.server.stop()
        import jpype

        # A JVM left running crashes the interpreter at exit next to llama.cpp's threads.
        if jpype.isJVMStarted():
            jpype.shutdownJVM()


def real_neo4j_target() -> BoltTarget | None:
    uri = os.environ.get("NEO4J_URI")
    return BoltTarget.parse(uri) if uri else None


def wiped(target: BoltTarget) -> Neo4jStore:
    store = connect(target)
    store.delete_all()
    return store
