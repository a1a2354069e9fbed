"""The OTLP exporter's HTTP transport for a plain-HTTP collector: the standard library's
http.client, one kept-alive connection.

The SDK's exporter sends through a pluggable transport, by default a `requests`
session. Importing `requests` and its per-request work (proxy and netrc lookups,
hooks, adapters) is the largest part of what tracing costs a run once the spans are
cheap. Where none of that can matter (an `http://` endpoint no proxy variable covers,
no credential provider asked for: a collector or agent beside the application, the
usual way to run OpenTelemetry) this transport sends the request; anywhere else
`transport_for` gives None and the SDK's own transport does, with all of its
behaviour. Retries, backoff, compression, headers and the timeout stay the SDK's: this
only carries one request."""

from __future__ import annotations

import http.client
import netrc
import os
import urllib.request
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from opentelemetry.exporter.http.transport._base import BaseHTTPResult, BaseHTTPTransport

# a provider of a `requests` session (with its credentials) for every signal, or for traces
CREDENTIAL_VARS = (
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
)
_DEFAULT_ENDPOINT = "http://localhost:4318"  # the SDK's, when no variable names one


def endpoint() -> str:
    """The traces endpoint the SDK's exporter resolves from the environment."""
    url = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if url:
        return url
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or _DEFAULT_ENDPOINT
    return f"{base.removesuffix('/')}/v1/traces"


def transport_for(url: str) -> HTTPTransport | None:
    """This transport for `url`, or None where the SDK's must send: TLS (its
    certificate bundle and client certificates are `requests`' reading), credentials
    (in the URL, in a netrc file, from a credential provider's `requests` session), a
    proxy the environment sets for the host, or a URL this cannot read (the SDK's
    transport then says what is wrong with it, export by export, as before)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises on a port that is not one
    except ValueError:
        return None
    if parts.scheme.lower() != "http" or not host or parts.username or parts.password:
        return None
    if any(os.environ.get(name) for name in CREDENTIAL_VARS) or _netrc_has(host):
        return None
    # the proxies `requests` would look up (the environment's; the system's on macOS
    # and Windows), and whether the host is exempt from them
    proxies = urllib.request.getproxies()
    if ("http" in proxies or "all" in proxies) and not urllib.request.proxy_bypass(host):
        return None
    return HTTPTransport()


def _netrc_has(host: str) -> bool:
    """Whether a netrc file (where `requests` looks: $NETRC, ~/.netrc, ~/_netrc) has
    credentials for the host; one it cannot read has none, as for `requests`."""
    named = os.environ.get("NETRC")
    files = [named] if named else [os.path.expanduser(f"~/{name}") for name in (".netrc", "_netrc")]
    for path in files:
        if not os.path.exists(path):
            continue
        try:
            return netrc.netrc(path).authenticators(host) is not None
        except (OSError, netrc.NetrcParseError):
            return False
    return False


# the transports of this process: a forked child opens its own connections
_open: weakref.WeakSet[HTTPTransport] = weakref.WeakSet()


def _forget_in_child() -> None:
    for transport in list(_open):
        transport.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class _Headers(Mapping[str, str]):
    """A response's headers, case-insensitive; a repeated header's values joined by commas."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._by_key: dict[str, str] = {}
        for key, value in items:
            key = key.lower()
            self._by_key[key] = f"{self._by_key[key]}, {value}" if key in self._by_key else value

    def __getitem__(self, key: str) -> str:
        return self._by_key[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)


@dataclass(frozen=True, slots=True)
class HTTPResult(BaseHTTPResult):
    body: bytes = field(default=b"", repr=False)
    header_items: list[tuple[str, str]] = field(default_factory=list, repr=False)

    def content(self) -> bytes:
        return self.body

    def headers(self) -> Mapping[str, str]:
        return _Headers(self.header_items)


class HTTPTransport(BaseHTTPTransport):
    """One connection to the collector, kept alive between requests and opened again
    after an error (the SDK's client retries a connection error at once, which is how
    a connection the collector closed while idle is replaced). The exporter sends one
    request at a time."""

    def __init__(self) -> None:
        self._connection: http.client.HTTPConnection | None = None
        self._to: tuple[str, int] | None = None
        _open.add(self)

    def forget(self) -> None:
        """Let go of the connection without closing it: a forked child's copy of its
        socket is its parent's, whose requests it would mix with its own."""
        self._connection = None

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        data: bytes | None = None,
    ) -> BaseHTTPResult:
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        try:
            connection = self._connect(parts.hostname or "", parts.port or 80, timeout)
            connection.request(method, target, body=data, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException, ValueError) as error:
            self.close()  # half a request may be on it
            return HTTPResult(error=error)
        if response.will_close:
            self.close()
        return HTTPResult(
            status_code=response.status, reason=response.reason, body=body, header_items=response.getheaders()
        )

    def _connect(self, host: str, port: int, timeout: float | None) -> http.client.HTTPConnection:
        if self._connection is None or self._to != (host, port):
            self.close()
            self._connection, self._to = http.client.HTTPConnection(host, port, timeout=timeout), (host, port)
        connection = self._connection
        connection.timeout = timeout  # what is left of the export's deadline, request by request
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        return connection

    def is_connection_error(self, exception: Exception | None) -> bool:
        # refused, reset, closed while idle, timed out: not an answer from the collector
        return isinstance(exception, OSError | http.client.HTTPException)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
