"""Which failures are worth another try, and how long to wait before it."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import openai

# Fault kinds, as the run summary and the call records name them.
RATE_LIMITED = "rate_limited"
SERVER_ERROR = "server_error"
TIMEOUT = "timeout"
DISCONNECT = "disconnect"
MALFORMED = "malformed_body"
EMPTY = "empty_choices"
INVALID_JSON = "invalid_json"
TRUNCATED = "truncated"


class RetryableFault(Exception):
    """A reply that arrived but cannot be used (no choices, an unparsable body)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; a server's Retry-After wins when given."""

    attempts: int = 6  # tries in all, the first included
    base_s: float = 0.5
    max_s: float = 30.0
    max_retry_after_s: float = 60.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after_s)
        return rng.uniform(0, min(self.max_s, self.base_s * 2 ** (retry - 1)))


def _causes(exc: BaseException, depth: int = 8) -> list[BaseException]:
    """`exc` and the exceptions it was raised from, outermost first."""
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < depth:
        chain.append(chain[-1].__cause__)
    return chain


def _dropped(exc: BaseException) -> bool:
    """A closed connection the transport reported as a timeout: the SDK's aiohttp
    transport maps every aiohttp connection error, a server hanging up included, to
    httpx's ConnectTimeout. A real timeout is a TimeoutError somewhere in the chain."""
    from_aiohttp = [c for c in _causes(exc) if type(c).__module__.startswith("aiohttp")]
    return bool(from_aiohttp) and not any(isinstance(c, TimeoutError) for c in from_aiohttp)


def classify(exc: BaseException) -> str | None:
    """The fault kind of a retryable failure, None for one that another try will not fix
    (a bad request, a refused key, an unknown model)."""
    if isinstance(exc, RetryableFault):
        return exc.kind
    if isinstance(exc, openai.APITimeoutError):
        return DISCONNECT if _dropped(exc) else TIMEOUT
    if isinstance(exc, openai.APIConnectionError):
        return DISCONNECT
    if isinstance(exc, openai.APIResponseValidationError):
        return MALFORMED
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 429:
            return RATE_LIMITED
        if exc.status_code >= 500 or exc.status_code in (408, 409):
            return SERVER_ERROR
        return None
    if isinstance(exc, ValueError):  # the client could not decode the body
        return MALFORMED
    return None


def why(exc: BaseException) -> str:
    """What went wrong, for one line to the user: the innermost cause's own words (the
    transport's "Cannot connect to host …"), or the error's type."""
    return str(_causes(exc)[-1]).strip() or type(exc).__name__


def retry_after(exc: BaseException, now: datetime | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, or `Retry-After` as
    seconds or an HTTP date."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
