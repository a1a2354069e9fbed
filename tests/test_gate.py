"""The session's concurrency limit lets waiting calls in by rank, then in arrival order,
and a waiter cancelled before or after it was let in never keeps a slot."""

from __future__ import annotations

import asyncio

import pytest

from dagmca.llm.gate import Gate, current_rank, ranked


async def _wait_in(gate: Gate, rank: int, admitted: list[str], name: str, hold: asyncio.Event) -> None:
    with ranked(rank):
        async with gate:
            admitted.append(name)
            await hold.wait()


def test_waiters_are_let_in_by_rank_then_in_arrival_order() -> None:
    async def main() -> list[str]:
        gate, admitted, hold = Gate(1), [], asyncio.Event()
        hold.set()  # each one lets the next in as soon as it is in
        await gate.acquire()  # every slot taken: the rest wait
        waiters = []
        for name, rank in (("a", 2), ("b", 1), ("c", 2), ("d", 0), ("e", 1)):
            waiters.append(asyncio.create_task(_wait_in(gate, rank, admitted, name, hold)))
            await asyncio.sleep(0)  # queued in this order
        gate.release()
        await asyncio.gather(*waiters)
        return admitted

    assert asyncio.run(main()) == ["d", "b", "e", "a", "c"]


def test_a_free_slot_is_taken_at_once_whatever_the_rank() -> None:
    async def main() -> bool:
        gate = Gate(2)
        with ranked(9):
            await gate.acquire()
            await gate.acquire()
        return gate.locked()

    assert asyncio.run(main())


async def _two_waiting(
    first: str, second: str
) -> tuple[Gate, list[str], asyncio.Task[None], asyncio.Task[None]]:
    """A gate of one slot, taken, and two callers queued for it (ranks 0 and 1); each
    lets the next in as soon as it is in. Returns the gate, the names let in so far and
    the two callers."""
    gate, admitted, hold = Gate(1), [], asyncio.Event()
    hold.set()
    await gate.acquire()
    tasks = [
        asyncio.create_task(_wait_in(gate, rank, admitted, name, hold))
        for rank, name in enumerate((first, second))
    ]
    await asyncio.sleep(0)
    return gate, admitted, tasks[0], tasks[1]


def test_a_waiter_cancelled_before_it_is_let_in_takes_no_slot() -> None:
    async def main() -> list[str]:
        gate, admitted, first, second = await _two_waiting("cancelled", "next")
        first.cancel()
        await asyncio.sleep(0)
        gate.release()
        await second
        # both slots' worth back: one acquire does not wait
        await asyncio.wait_for(gate.acquire(), timeout=1)
        return admitted

    assert asyncio.run(main()) == ["next"]


def test_a_waiter_cancelled_after_it_was_let_in_passes_its_slot_on() -> None:
    async def main() -> list[str]:
        gate, admitted, first, second = await _two_waiting("first", "second")
        gate.release()  # the slot goes to `first`, which has not run yet
        first.cancel()
        await asyncio.wait_for(second, timeout=1)
        with pytest.raises(asyncio.CancelledError):
            await first
        return admitted

    assert asyncio.run(main()) == ["second"]


def test_a_rank_reaches_the_tasks_started_under_it_and_ends_with_it() -> None:
    async def main() -> tuple[int, int, int]:
        async def rank_of_a_task() -> int:
            return current_rank()

        with ranked(3):
            task = asyncio.create_task(rank_of_a_task())
            inside = current_rank()
        return inside, await task, current_rank()

    assert asyncio.run(main()) == (3, 3, 0)
