"""A turn of Telegram's limits that a slot leaves unused goes to another send at once (``bot.ratelimit``).

The limits here are one turn a minute, so a send that got a turn while another's was due a minute
later can only have got a turn passed on: nothing depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from bot.ratelimit import Stopping, TelegramRateLimiter
from bot.shared_limits import SharedTurns
from storage import open_storage

MINUTE = (1, 60)  # one turn a minute: a send that waits for its own turn waits a minute


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


class Sends:
    """Slots opened on one limiter, each held open until told to send (or not)."""

    def __init__(self, limiter: TelegramRateLimiter) -> None:
        self.limiter = limiter
        self.entered: list[int] = []
        self.calls: list[int] = []
        self._go: dict[int, asyncio.Future[bool]] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def open(self, chat_id: int) -> None:
        self._go[chat_id] = asyncio.get_running_loop().create_future()
        self._tasks[chat_id] = asyncio.create_task(self._slot(chat_id))

    async def give_up(self, chat_id: int) -> None:
        """The send stops waiting (its task is cancelled), as a shut-down or a dropped table does."""
        self._tasks[chat_id].cancel()
        await asyncio.gather(self._tasks[chat_id], return_exceptions=True)

    async def _slot(self, chat_id: int) -> None:
        async with self.limiter.slot(chat_id):
            self.entered.append(chat_id)
            if await self._go[chat_id]:
                await self.limiter.process_request(self._call(chat_id), (), {}, "sendMessage",
                                                   {"chat_id": chat_id, "text": "x"}, None)

    def _call(self, chat_id: int) -> Callable[[], Awaitable[bool]]:
        async def call() -> bool:
            self.calls.append(chat_id)
            return True
        return call

    async def open_waiting(self, *chat_ids: int) -> None:
        """Open slots that must wait, one after the other (so their order is known)."""
        for chat_id in chat_ids:
            waiting = self.limiter.waiting
            self.open(chat_id)
            await until(lambda w=waiting: self.limiter.waiting == w + 1)

    def finish(self, chat_id: int, *, send: bool) -> None:
        self._go[chat_id].set_result(send)

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        await self.limiter.shutdown()


@pytest.fixture
async def in_memory() -> AsyncIterator[Sends]:
    sends = Sends(TelegramRateLimiter(overall_max_rate=MINUTE[0], overall_time_period=MINUTE[1],
                                      group_max_rate=MINUTE[0], group_time_period=MINUTE[1]))
    yield sends
    await sends.close()


async def test_a_turn_left_unused_goes_at_once_to_the_send_waiting_longest(in_memory: Sends) -> None:
    sends = in_memory
    sends.open(1)
    await until(lambda: sends.entered == [1])  # the first turn of the minute
    await sends.open_waiting(2, 3)  # each would wait a minute for its own
    sends.finish(1, send=False)  # nothing to send after all
    await until(lambda: sends.entered == [1, 2])
    sends.finish(2, send=True)
    await until(lambda: sends.calls == [2])
    assert sends.entered == [1, 2] and sends.limiter.waiting == 1  # 3 still waits for its own turn
    stats = sends.limiter.stats
    assert (stats.taken, stats.unused, stats.passed) == (2, 1, 1)


async def test_a_groups_turn_serves_that_group_or_a_private_chat_and_a_private_turn_no_group(
        in_memory: Sends) -> None:
    sends = in_memory
    sends.open(-100)
    await until(lambda: sends.entered == [-100])
    await sends.open_waiting(-200, 7)  # another group's send first, then a private chat's
    sends.finish(-100, send=False)
    # -200's own group has its turn, but the bot's turn went to -100: only the private send may use it.
    await until(lambda: sends.entered == [-100, 7])
    sends.finish(7, send=False)  # a private chat's turn does not count against any group: not for -200
    await until(lambda: sends.limiter.stats.lost == 1)
    assert sends.entered == [-100, 7] and sends.limiter.waiting == 1


async def test_a_send_served_by_a_passed_turn_passes_its_own_on_when_it_comes() -> None:
    # Two turns a second: 1 at once, 2's own half a second later, 3's a second later.
    sends = Sends(TelegramRateLimiter(overall_max_rate=2, overall_time_period=1, group_max_rate=0))
    try:
        sends.open(1)
        sends.open(2)
        await until(lambda: sends.entered == [1, 2])  # the burst of two
        await sends.open_waiting(3, 4, 5)
        sends.finish(1, send=False)  # its turn goes to 3, whose own then goes to 4 when it comes
        await until(lambda: sends.entered == [1, 2, 3, 4, 5])
        # 3 by 1's unused turn, 4 by 3's own turn, 5 by 4's own (each in the order they waited).
        assert sends.limiter.stats.passed >= 3
    finally:
        await sends.close()


async def test_a_send_that_gives_up_waiting_leaves_its_turn_to_the_next() -> None:
    # Two turns a second: 1 and 2 at once, 3's own half a second later, 4's a second later.
    sends = Sends(TelegramRateLimiter(overall_max_rate=2, overall_time_period=1, group_max_rate=0))
    try:
        sends.open(1)
        sends.open(2)
        await until(lambda: sends.entered == [1, 2])
        await sends.open_waiting(3, 4)
        await sends.give_up(3)
        await until(lambda: sends.entered == [1, 2, 4])
        # 3's turn, reserved before 4's, came first and went to 4 (its own came after).
        assert sends.limiter.stats.passed == 1 and 3 not in sends.entered
    finally:
        await sends.close()


async def test_a_private_chats_send_goes_before_a_groups_that_came_just_before_it() -> None:
    # One turn of the bot's every 0.3 s (groups' own buckets never full): 1 at once, then the private
    # chat 7 before the group -100 that started waiting first.
    sends = Sends(TelegramRateLimiter(overall_max_rate=1, overall_time_period=0.3, group_max_rate=100,
                                      group_time_period=1))
    try:
        sends.open(1)
        await until(lambda: sends.entered == [1])
        await sends.open_waiting(-100, 7)
        await until(lambda: len(sends.entered) == 3)
        assert sends.entered == [1, 7, -100]
    finally:
        await sends.close()


async def test_a_stopping_bot_gives_up_the_sends_still_waiting_after_its_grace(in_memory: Sends) -> None:
    sends = in_memory
    sends.open(1)
    await until(lambda: sends.entered == [1])  # the minute's turn
    await sends.open_waiting(2)  # a minute away
    sends.limiter.stop_waiting(0.05)
    with pytest.raises(Stopping):
        await sends._tasks[2]
    with pytest.raises(Stopping):  # asking after the grace: refused at once
        async with sends.limiter.slot(3):
            pass
    assert sends.limiter.waiting == 0 and sends.entered == [1]


@pytest.mark.both_backends
async def test_with_shared_turns_a_turn_left_unused_goes_to_a_send_waiting_in_the_process(db_url: str) -> None:
    store = await open_storage(db_url)  # the schema, with its rate_slots table
    await store.close()
    limiter = TelegramRateLimiter(overall_max_rate=MINUTE[0], overall_time_period=MINUTE[1], group_max_rate=0,
                                  shared=SharedTurns(db_url, overall=MINUTE))
    await limiter.initialize()
    sends = Sends(limiter)
    try:
        sends.open(1)
        await until(lambda: sends.entered == [1])
        await sends.open_waiting(2)  # its turn reserved in the database, a minute away
        sends.finish(1, send=False)
        await until(lambda: sends.entered == [1, 2])
        sends.finish(2, send=True)
        await until(lambda: sends.calls == [2])
    finally:
        await sends.close()  # the reservation still a minute away ends with the limiter
