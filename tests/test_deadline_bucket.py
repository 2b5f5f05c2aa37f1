"""The bot's overall Telegram bucket serves the most urgent waiter first (``bot.deadline_bucket``).

Only orders and lower bounds of time are asserted, so a slow machine cannot fail these.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.deadline_bucket import DeadlineBucket


async def take(bucket: DeadlineBucket, name: str, patience: float, order: list[str]) -> None:
    await bucket.acquire(patience)
    order.append(name)


async def queued(bucket: DeadlineBucket, name: str, patience: float, order: list[str]) -> asyncio.Task[None]:
    """Start a waiter and let it reach the queue before the next one is started."""
    task = asyncio.create_task(take(bucket, name, patience, order))
    await asyncio.sleep(0)
    return task


async def test_a_send_without_patience_passes_patient_ones_that_came_just_before() -> None:
    bucket = DeadlineBucket(1, 0.05)
    await bucket.acquire()  # the burst is spent: everyone below waits
    order: list[str] = []
    tasks = [await queued(bucket, "group", 10.0, order), await queued(bucket, "dm", 0.0, order),
             await queued(bucket, "dm2", 0.0, order)]
    await asyncio.gather(*tasks)
    assert order == ["dm", "dm2", "group"]


async def test_a_patient_send_goes_before_what_came_after_its_patience() -> None:
    bucket = DeadlineBucket(1, 0.3)
    await bucket.acquire()
    order: list[str] = []
    group = await queued(bucket, "group", 0.05, order)
    await asyncio.sleep(0.1)  # past the group's patience (its turn is due 0.3 s after the first)
    dm = await queued(bucket, "dm", 0.0, order)
    await asyncio.gather(group, dm)
    assert order == ["group", "dm"]


async def test_turns_come_no_faster_than_the_rate_after_the_burst() -> None:
    bucket = DeadlineBucket(2, 0.2)  # two at once, then one every 0.1 s
    began = time.monotonic()
    order: list[str] = []
    await asyncio.gather(*(take(bucket, str(n), 0.0, order) for n in range(6)))
    assert time.monotonic() - began >= 0.35
    assert order == [str(n) for n in range(6)]  # equal patience: first come, first served


async def test_a_waiter_that_gives_up_leaves_its_turn_to_the_next() -> None:
    bucket = DeadlineBucket(1, 0.1)
    await bucket.acquire()
    order: list[str] = []
    first = await queued(bucket, "first", 0.0, order)
    second = await queued(bucket, "second", 0.0, order)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    await asyncio.wait_for(second, 5)
    assert order == ["second"]


def test_a_bucket_without_room_for_one_turn_is_refused() -> None:
    with pytest.raises(ValueError):
        DeadlineBucket(0.5, 1)
