"""A caller cancelled while its unit is being opened must not stall every later write (or close)."""

from __future__ import annotations

import asyncio

import pytest

from storage import open_storage


@pytest.mark.both_backends
async def test_cancelled_callers_never_stall_the_writer(db_url: str) -> None:
    storage = await open_storage(db_url)
    try:
        for round_ in range(300):
            tasks = [asyncio.create_task(storage.save_user(1000 + i, f"user {i}")) for i in range(3)]
            for _ in range(round_ % 30):  # cancel at every point of a unit's turn, in turn
                await asyncio.sleep(0)
            tasks[round_ % 3].cancel()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
        assert (await asyncio.wait_for(storage.save_user(1, "after"), 5)).display_name == "after"
    finally:
        await asyncio.wait_for(storage.close(), 5)
