"""A leaky bucket that serves the most urgent waiter first, for the bot's overall Telegram limit.

At fifty tables the bot sends about as many messages as Telegram allows it (~30 a second), so
every send waits its turn. With aiolimiter's bucket, which serves its waiters in the order they
came, the edit of the DM a player had just pressed in waited behind a second of group pictures
(p50 1.1 s), while a group's picture is redrawn from the latest state whenever it goes and is
seldom watched as closely. Here each waiter has a deadline, its arrival plus its *patience*, and
the earliest deadline goes first: a send with no patience passes every more patient send that
came less than that patience before it, and a patient send is never passed by anything that came
more than its patience after it, so none starves.

The bucket itself is aiolimiter's: ``max_rate`` turns in a burst, refilled at ``max_rate`` per
``time_period``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class DeadlineBucket:
    """A leaky bucket whose waiters are served by earliest deadline (arrival + patience)."""

    def __init__(self, max_rate: float, time_period: float = 1.0) -> None:
        if max_rate < 1 or time_period <= 0:
            raise ValueError("a bucket needs room for one turn and a positive period")
        self.max_rate = max_rate
        self._per_second = max_rate / time_period
        self._level = 0.0
        self._checked = 0.0
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()  # equal deadlines: first come, first served
        self._timer: asyncio.TimerHandle | None = None

    def _leak(self, now: float) -> None:
        self._level = max(0.0, self._level - (now - self._checked) * self._per_second)
        self._checked = now

    def _drop_abandoned(self) -> None:
        while self._waiters and self._waiters[0][2].done():
            heapq.heappop(self._waiters)

    def has_capacity(self) -> bool:
        """Whether a turn taken now would not wait (nobody is waiting, and the bucket has room)."""
        self._drop_abandoned()
        self._leak(asyncio.get_running_loop().time())
        return not self._waiters and self._level + 1 <= self.max_rate

    async def acquire(self, patience: float = 0.0) -> None:
        """Take one turn: at once if there is room and nobody waits, else when it is this waiter's
        turn by deadline."""
        loop = asyncio.get_running_loop()
        if self.has_capacity():
            self._level += 1
            return
        granted: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._waiters, (loop.time() + patience, next(self._order), granted))
        self._serve()
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # granted, then cancelled: the turn is not used
                self._level = max(0.0, self._level - 1)
            self._serve()
            raise

    def _serve(self) -> None:
        """Grant turns while there is room, earliest deadline first; then wait for the next room."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        loop = asyncio.get_running_loop()
        while True:
            self._drop_abandoned()
            if not self._waiters:
                return
            self._leak(loop.time())
            if self._level + 1 > self.max_rate:
                break
            _, _, granted = heapq.heappop(self._waiters)
            self._level += 1
            granted.set_result(None)
        room_at = self._checked + (self._level + 1 - self.max_rate) / self._per_second
        self._timer = loop.call_at(room_at, self._serve)
