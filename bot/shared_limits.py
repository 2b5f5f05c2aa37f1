"""Telegram's rate limits kept across every worker of one bot, in the database they share.

``TelegramRateLimiter`` (``bot.ratelimit``) keeps one process under the bot's ~30 messages a
second and each group's ~20 a minute. Several workers (``xuezhan run --workers N``, or machines
behind one proxy) each keeping those limits alone would together send N times too much, so with
PostgreSQL and ``XUEZHAN_WORKERS`` > 1 the turns come from the database instead
(``storage.rate_slots``): the same buckets, one row each, whichever worker sends.

When the database cannot give a turn (PostgreSQL restarting), a send does not wait for it: the
worker falls back to its in-memory buckets at its share of the limits (1/N of them), logs that
once, and goes back to the shared turns as soon as the database answers again. A 429 (flood
limit) that one worker is told of holds the bot's turns back for every worker.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from telegram.constants import FloodLimit

from bot.ratelimit import ChatKey, TelegramRateLimiter
from bot.settings import Settings
from storage import StorageError
from storage.factory import describe

if TYPE_CHECKING:
    from storage.rate_slots import RateSlots

log = logging.getLogger(__name__)

BOT_KEY = "bot"


async def _open_rate_slots(target: str) -> RateSlots:
    """``storage.rate_slots`` is imported by the workers that share limits only: it loads the
    PostgreSQL driver, a tenth of a second of every single bot's start-up otherwise."""
    from storage.rate_slots import open_rate_slots

    return await open_rate_slots(target)


class SharedTurns:
    """Turns of the bot's bucket and of each group's, reserved in the database ``target``."""

    def __init__(self, target: str, *, overall: tuple[float, float] = (FloodLimit.MESSAGES_PER_SECOND, 1),
                 group: tuple[float, float] = (FloodLimit.MESSAGES_PER_MINUTE_PER_GROUP, 60)) -> None:
        self._target = target
        self._overall = overall  # (turns, per seconds), as AsyncLimiter(max_rate, time_period)
        self._group = group
        self._slots: RateSlots | None = None
        self._away = False  # the database failed the last turn; logged once until it answers again

    async def open(self) -> None:
        """Connect (a database away at start-up is tried again at the first send)."""
        try:
            self._slots = await _open_rate_slots(self._target)
        except StorageError as error:
            self._note_away(error)

    async def close(self) -> None:
        if self._slots is not None:
            await self._slots.close()
            self._slots = None

    async def take(self, key: ChatKey, *, group: bool) -> float | None:
        """Wait for ``key``'s turn (of the bot's bucket, and its group's at the same moment) and
        return when it was (seconds since the epoch, by the database's clock); None if the
        database cannot give one, and the caller keeps the limits itself."""
        try:
            turns = [(BOT_KEY, *_turn(self._overall))]
            if group:
                turns.append((f"chat:{key}", *_turn(self._group)))
            grant = await (await self._connected()).reserve(turns)
        except StorageError as error:
            self._note_away(error)
            return None
        if self._away:
            log.info("shared rate limits: the database answers again")
            self._away = False
        await asyncio.sleep(grant.wait)
        return grant.at

    async def hold(self, seconds: float) -> None:
        """Telegram answered 429: no worker sends for ``seconds`` (best effort; the worker that
        was told waits anyway)."""
        try:
            await (await self._connected()).hold(BOT_KEY, seconds, *_turn(self._overall))
        except StorageError as error:
            self._note_away(error)

    async def _connected(self) -> RateSlots:
        if self._slots is None:
            self._slots = await _open_rate_slots(self._target)
        return self._slots

    def _note_away(self, error: StorageError) -> None:
        if not self._away:
            log.warning("shared rate limits: %s; keeping this worker's share of the limits in memory", error)
            self._away = True


def _turn(rate: tuple[float, float]) -> tuple[float, int]:
    """(seconds between turns, burst) of a bucket of ``rate[0]`` turns per ``rate[1]`` seconds."""
    turns, period = rate
    return period / turns, max(1, int(turns))


def rate_limiter_for(settings: Settings) -> TelegramRateLimiter:
    """The bot's limiter: in memory for one process, shared in PostgreSQL for several workers."""
    workers = settings.workers
    if workers <= 1 or describe(settings.db)[0] != "postgresql":
        return TelegramRateLimiter()
    return TelegramRateLimiter(
        overall_max_rate=max(1.0, FloodLimit.MESSAGES_PER_SECOND / workers),
        group_max_rate=max(1.0, FloodLimit.MESSAGES_PER_MINUTE_PER_GROUP / workers),
        shared=SharedTurns(settings.db),
    )
