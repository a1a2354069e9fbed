"""The rate limiter's arithmetic on a clock that only moves when a sender waits, and its
place in the backend: every try waits for it, every 429 slows it."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from openai import AsyncOpenAI

from dagmca.llm.base import Request
from dagmca.llm.limiter import MARGIN, RateLimiter
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.retry import RetryPolicy
from tests.support.fault_server import FaultServer, most_in_window


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def limiter(**kwargs: Any) -> tuple[RateLimiter, Clock]:
    clock = Clock()
    return RateLimiter(clock=clock, sleep=clock.sleep, **kwargs), clock


async def times(lim: RateLimiter, n: int, tokens: int = 0) -> list[float]:
    return [(await lim.acquire(tokens)).at for _ in range(n)]


def test_requests_are_spaced_and_no_minute_holds_more_than_the_limit() -> None:
    lim, _ = limiter(rpm=60)
    sent = asyncio.run(times(lim, 200))
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    assert min(gaps) >= 60 / (60 * MARGIN) - 1e-9, "spaced, never a burst"
    assert most_in_window(sent, 60.0) <= 60
    assert most_in_window(sent, 60.0) >= 58, "and the limit is used"


def test_tokens_per_minute_wait_for_the_window_and_count_what_was_used() -> None:
    lim, clock = limiter(tpm=1000)

    async def go() -> list[float]:
        first = await lim.acquire(400)
        second = await lim.acquire(400)
        third = await lim.acquire(400)  # 1,200 > 980: waits until the first leaves the window
        lim.settle(third, 50)  # it used far less than its estimate
        fourth = await lim.acquire(400)
        return [first.at, second.at, third.at, fourth.at]

    a, b, c, d = asyncio.run(go())
    assert a == b and c >= a + 60 and d == c
    big, _ = limiter(tpm=100)
    assert asyncio.run(times(big, 2, tokens=500))[1] >= 1060, "a request over the whole limit goes alone"
    assert clock.now >= a + 60


def test_a_429_pauses_everyone_slows_the_rate_and_it_recovers() -> None:
    lim, _clock = limiter(rpm=120)
    full = 120 * MARGIN

    async def go() -> tuple[float, float]:
        sent = await lim.acquire()
        lim.rate_limited(5.0)
        after = await lim.acquire()
        return sent.at, after.at

    sent, after = asyncio.run(go())
    assert after >= sent + 5.0, "Retry-After is waited out"
    assert lim.rate == full * 0.8 and lim.throttled == 1
    for _ in range(20):
        lim.settle(lim._sent[-1], 10)
    assert lim.rate == full, "replies that go through bring the rate back, not beyond"
    for _ in range(30):
        lim.rate_limited(None)
    assert lim.rate is not None and lim.rate >= full / 10, "never slowed to nothing"


def test_without_a_limit_a_429_pauses_everyone_and_guesses_no_rate() -> None:
    lim, clock = limiter()

    async def go() -> tuple[float, float]:
        await times(lim, 50)
        start = clock.now
        lim.rate_limited(3.0)
        return start, (await lim.acquire()).at

    start, after = asyncio.run(go())
    assert after >= start + 3.0, "everyone waits out the Retry-After"
    assert lim.rate is None and not lim.limited and lim.throttled == 1


@pytest.mark.slow
def test_the_backend_waits_for_the_limiter_and_reports_429s() -> None:
    with FaultServer(rates={"rate_limit": 0.3}, retry_after="0.01", seed=4) as server:
        lim = RateLimiter(rpm=6000)
        client = AsyncOpenAI(base_url=server.base_url, api_key="sk-limiter", max_retries=0, timeout=5)
        backend = OpenAIBackend(
            client, "fault-model", policy=RetryPolicy(attempts=8, base_s=0.01, max_s=0.02), limiter=lim
        )

        async def go() -> None:
            await asyncio.gather(
                *(
                    backend.complete(Request([{"role": "user", "content": f"q{i}"}], max_tokens=20))
                    for i in range(12)
                )
            )
            await backend.aclose()

        asyncio.run(go())
    assert lim.requests == server.requests, "every try, retries included, went through the limiter"
    assert lim.throttled == server.injected["rate_limit"] > 0
    assert lim.rate is not None and lim.rate < 6000 * MARGIN
