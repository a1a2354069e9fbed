"""One rate limit for every request a process sends: requests per minute
and tokens per minute, shared by every session and call of a run or a build.

Requests are spaced (never a burst at the limit), so no 60-second window holds more
than the limit; tokens are counted over the last 60 seconds, each request at its
estimate until its reply says what it used. A 429 slows every sender at once: all wait
out its Retry-After, and the rate drops by a fifth, then climbs back by a fiftieth of
the limit per reply that went through. With no limit set, a 429 pauses every sender
for its Retry-After and no rate is guessed: a flaky endpoint's occasional 429 early in a
run (a few requests in the window) would otherwise set a limit of a few per minute."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

WINDOW_S = 60.0
# aim a little under a limit: the server's clock sees requests with network jitter
MARGIN = 0.98
SLOW_DOWN = 0.8  # the rate after a 429, as a share of what it was
RECOVER = 0.02  # the rate regained per reply, as a share of the limit
PAUSE_S = 1.0  # how long every sender waits after a 429 that gives no Retry-After


@dataclass
class Sent:
    at: float
    tokens: int


class RateLimiter:
    """`await acquire(tokens)` before each request (each try, retries included); then
    `settle(sent, tokens_used)` after a reply, `rate_limited(retry_after)` after a 429.

    `clock` and `sleep` can be handed in, so the arithmetic is tested without waiting."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.tpm = tpm
        self.rate: float | None = rpm * MARGIN if rpm else None  # requests per minute aimed at now
        self._ceiling = self.rate
        self.clock = clock
        self.sleep = sleep
        self._sent: deque[Sent] = deque()
        self._last = float("-inf")
        self._paused_until = float("-inf")
        self._lock: asyncio.Lock | None = None
        self.requests = 0
        self.throttled = 0  # 429s seen

    @property
    def limited(self) -> bool:
        return self.rate is not None or self.tpm is not None

    def _trim(self, now: float) -> None:
        while self._sent and self._sent[0].at <= now - WINDOW_S:
            self._sent.popleft()

    def _wait(self, now: float, tokens: int) -> float:
        self._trim(now)
        wait = self._paused_until - now
        if self.rate:
            wait = max(wait, self._last + WINDOW_S / self.rate - now)
        if self.tpm and self._sent:
            used = sum(s.tokens for s in self._sent)
            # wait for enough of the window to pass; a request larger than the whole
            # limit goes alone, into an empty window
            for s in self._sent:
                if used + tokens <= self.tpm * MARGIN:
                    break
                used -= s.tokens
                wait = max(wait, s.at + WINDOW_S - now)
        return wait

    async def acquire(self, tokens: int = 0) -> Sent:
        """Wait until a request of about `tokens` may go; first come, first served."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while True:
                now = self.clock()
                wait = self._wait(now, tokens)
                if wait <= 0:
                    break
                await self.sleep(wait)
            sent = Sent(now, tokens)
            self._sent.append(sent)
            self._last = now
            self.requests += 1
            return sent

    def settle(self, sent: Sent, tokens: int) -> None:
        """A reply arrived: count what it used, and regain some rate after a slow-down."""
        sent.tokens = tokens
        if self.rate is not None and self._ceiling is not None and self.rate < self._ceiling:
            self.rate = min(self._ceiling, self.rate + self._ceiling * RECOVER)

    def rate_limited(self, retry_after: float | None) -> None:
        """A 429: every sender waits, and the rate drops."""
        now = self.clock()
        self.throttled += 1
        self._paused_until = max(self._paused_until, now + (retry_after if retry_after else PAUSE_S))
        if self.rate is not None:
            floor = (self._ceiling or self.rate) / 10
            self.rate = max(floor, 1.0, self.rate * SLOW_DOWN)

    def per_minute(self) -> int:
        """Requests sent in the last minute."""
        self._trim(self.clock())
        return len(self._sent)
