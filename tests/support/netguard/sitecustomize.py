"""Loaded by every Python process a test starts (tests/support/sandbox.py puts this folder on
its PYTHONPATH): a connection to anything but this machine is refused, as pytest-socket
refuses it inside the test process itself."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _local(address: Any) -> bool:
    if not isinstance(address, tuple):  # a Unix socket's path
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # any other name is somewhere else


def _refuse(address: Any) -> None:
    if not _local(address):
        raise ConnectionRefusedError(
            f"tests allow no network beyond 127.0.0.1 (a connection to {address[0]})"
        )


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _refuse(address)
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _refuse(address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
