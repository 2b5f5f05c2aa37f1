"""Telegram's flood limits plus retries of transient server errors, for every API call the bot makes.

``TelegramRateLimiter`` keeps the bot under ~30 messages a second overall and ~20 a minute per
group (the leaky buckets of PTB's ``AIORateLimiter``), waits out a 429's ``retry_after``, and
retries a 5xx answer or a dropped connection with a short back-off, so a passing Telegram
hiccup loses nothing. Bad requests, 403s and time-outs are not retried: the first are final,
and after a time-out Telegram may have acted. A send retried after a dropped connection or a 5xx
may have been applied the first time too: ``bot.duplicates`` finds that copy and deletes it.

Its own addition is ``slot(chat_id)``: wait for the chat's turn *first*, then build the request.
The presenter draws a picture inside the slot, so a picture is drawn only when it can go out at
once, from the table's state at that moment; a state superseded while the send waited is never
drawn. The next call of the same task to that chat inside the slot uses the turn already taken.

**A turn nobody uses is passed on.** Whether a slot sends anything is often known only once its
turn has come (several workers: the table's messages are the database's, read holding the table;
a ping whose decision was made while it waited). Under load the wait for a turn is seconds long,
and a turn that ended unused was lost: at 150-200 tables on two workers a fifth of the bot's ~30
turns a second (pings and mentions for decisions made meanwhile, table edits another worker had
made). Now a slot left without a call hands its turn at once to the send of this process that
has waited longest and may use it (a private chat's turn to any private chat's send, a group's
to that group's or a private chat's: the bot's limit is the same, a group's own is not given
away), and that send's own turn, when it comes, is passed on the same way. ``stats`` counts the
turns taken, left unused and passed on.

**A player's DM goes before the groups' pictures.** When the bot sends as much as Telegram allows
(~30 a second, about fifty busy tables), every send waits its turn. The turns of the bot's limit are
given by deadline (``bot.deadline_bucket``): a private chat's send has no patience, a group's has
``GROUP_PATIENCE`` seconds, so the DM a player just pressed in is edited before group pictures that
came less than that before it, and a group's send waits at most that much longer than in order.
(Several workers: the database's turns are given in order; see ``bot.shared_limits``.)

**Several workers also pace the calls themselves.** A shared turn is granted before the worker
holds the table, which may take seconds under load; the calls of turns granted over those
seconds would then go out at once (94 in one second, 2 workers at 200 tables). Each worker's
calls are paced at its share of the bot's rate when they are made, as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from aiolimiter import AsyncLimiter
from telegram.constants import FloodLimit
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from bot.deadline_bucket import DeadlineBucket
from bot.duplicates import SENDS, KnownIds, already_done, delete_copies
from bot.messaging import fit_request
from bot.services import HTTP_POOL_SIZE

if TYPE_CHECKING:
    from bot.shared_limits import SharedTurns

log = logging.getLogger(__name__)

ApiResult = bool | dict[str, Any] | list[dict[str, Any]]
ChatKey = int | str

# Calls to a chat (sends, edits, uploads) in flight at once: the rest of the HTTP pool is kept for
# the calls without a chat, callback answers above all, so a press is answered at once even while
# pictures upload, instead of queueing for a connection behind them.
CHAT_CALLS_IN_FLIGHT = HTTP_POOL_SIZE - 4

# How much longer than a private chat's send a group's send may wait for the bot's turn. A group's
# table picture is edited at most every few seconds (4 by default) and drawn from the latest state
# whenever it goes, so under load it shows the table up to one such interval later, while the DM
# of the player who pressed is edited first (at 50 tables: p50 1.15 s -> 0.59 s; 6 s of patience
# gave 0.40 s, with the groups' pictures 4.7 s behind instead of 4.2 s).
GROUP_PATIENCE = 4.0

# How long a stopping bot still waits for Telegram's turns before it gives up the sends still queued
# (replies to a busy group wait 3 s each): docker allows a stopping container 10 s, systemd 90 s.
STOP_GRACE_SECONDS = 5.0

# The chat whose turn the current task holds (set by ``slot``, used by its next call there).
_ADMITTED: ContextVar[ChatKey | None] = ContextVar("xuezhan_rate_slot", default=None)


def chat_key(chat_id: Any) -> ChatKey | None:
    """The key a request is limited under: its ``chat_id`` as an int (or an @username)."""
    if chat_id is None:
        return None
    with contextlib.suppress(ValueError, TypeError):
        return int(chat_id)
    return str(chat_id)


@contextlib.asynccontextmanager
async def chat_turn(bot: Any, chat_id: int) -> AsyncIterator[None]:
    """Wait for ``chat_id``'s turn under the bot's limiter (``TelegramRateLimiter.slot``), so that
    what is sent inside is built when it can go at once; without such a limiter, at once."""
    slot = getattr(getattr(bot, "rate_limiter", None), "slot", None)
    if slot is None:
        yield
        return
    async with slot(chat_id):
        yield


def not_a_message(endpoint: str) -> bool:
    """Whether a call leaves the chat as it was: reading it (getChatMember, getChat, ...) or showing
    "typing…". Telegram's limits count messages; a group's 20 a minute spent on a permission check
    made a press in a busy group wait seconds for its answer (38 s behind ten queued replies)."""
    return endpoint.startswith("get") or endpoint == "sendChatAction"


class Stopping(TelegramError):
    """A send given up because the bot is stopping (``TelegramRateLimiter.stop_waiting``)."""

    def __init__(self, key: ChatKey) -> None:
        super().__init__(f"not sent to {key}: the bot is stopping")


@dataclass
class TurnStats:
    """What the limiter did with its turns (``TelegramRateLimiter.stats``): ``taken`` turns went to
    a send (its own or one passed on), ``unused`` slots ended without a call, ``passed`` turns were
    handed to another send (an unused slot's, or a send's own that came after it was served),
    ``lost`` ones came when no send of this process could use them."""

    taken: int = 0
    unused: int = 0
    passed: int = 0
    lost: int = 0

    def line(self) -> str:
        return (f"Telegram send turns: {self.taken} taken, {self.unused} left unused, {self.passed} passed on, "
                f"{self.lost} lost")


class TelegramRateLimiter(BaseRateLimiter[int]):
    """Overall and per-group leaky buckets, 429 and 5xx retries, and turns taken ahead (``slot``)."""

    def __init__(self, *, overall_max_rate: float = FloodLimit.MESSAGES_PER_SECOND, overall_time_period: float = 1,
                 group_max_rate: float = FloodLimit.MESSAGES_PER_MINUTE_PER_GROUP, group_time_period: float = 60,
                 retries: int = 3, server_error_retries: int = 3, backoff: float = 0.5,
                 shared: SharedTurns | None = None) -> None:
        # ``shared``: turns kept in the database for several workers (``bot.shared_limits``); the
        # buckets below are then this worker's share, used while the database cannot answer.
        self._shared = shared
        self._overall = DeadlineBucket(overall_max_rate, overall_time_period) \
            if overall_max_rate and overall_time_period else None
        # Shared turns are granted before the table is held, and a worker may hold it for seconds
        # (its lock, catching up, drawing): calls whose turns were spread out then go out
        # together (94 in one second at 200 tables on 2 workers). So a worker also paces its
        # calls themselves at its share of the bot's rate, when they are made.
        self._pace = AsyncLimiter(overall_max_rate, overall_time_period) \
            if shared is not None and overall_max_rate and overall_time_period else None
        self._group_rate = (group_max_rate, group_time_period) if group_max_rate and group_time_period else None
        self._groups: dict[ChatKey, AsyncLimiter] = {}
        self._retries = retries
        self._server_error_retries = server_error_retries
        self._backoff = backoff
        self._clear = asyncio.Event()  # cleared while a 429's retry_after holds every request back
        self._clear.set()
        self._known = KnownIds()  # message ids Telegram returned: bounds the search for a retry's copy
        self._chat_calls = asyncio.Semaphore(CHAT_CALLS_IN_FLIGHT)
        # Sends waiting for a turn: (key, counts against a group, deadline) by the future a turn
        # passed on is given through.
        self._waiting: dict[asyncio.Future[None], tuple[ChatKey, bool, float]] = {}
        self._coming: set[asyncio.Future[None]] = set()  # own turns of sends served by a passed one
        self._stopped: asyncio.Future[None] | None = None  # done once the bot's stop gave up waiting
        self.stats = TurnStats()

    async def initialize(self) -> None:
        if self._shared is not None:
            await self._shared.open()

    async def shutdown(self) -> None:
        for coming in list(self._coming):
            coming.cancel()
        for coming in list(self._coming):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await coming
        if self.stats.taken:
            log.info("%s", self.stats.line())
        if self._shared is not None:
            await self._shared.close()

    def _group(self, key: ChatKey) -> AsyncLimiter | None:
        if self._group_rate is None or (isinstance(key, int) and key > 0):
            return None  # private chats have no per-chat bucket
        found = self._groups.get(key)
        if found is None:
            if len(self._groups) > 512:  # forget the buckets of groups that went quiet
                for other, limiter in list(self._groups.items()):
                    if limiter.has_capacity(limiter.max_rate):
                        del self._groups[other]
            found = self._groups[key] = AsyncLimiter(*self._group_rate)
        return found

    @property
    def waiting(self) -> int:
        """Sends of this process waiting for a turn."""
        return sum(not waiter.done() for waiter in self._waiting)

    def _free_now(self, key: ChatKey) -> bool:
        """Whether the in-memory buckets give ``key`` a turn at once."""
        group = self._group(key)
        return ((group is None or group.has_capacity())
                and (self._overall is None or self._overall.has_capacity()))

    def _in_group(self, key: ChatKey) -> bool:
        return self._group_rate is not None and not (isinstance(key, int) and key > 0)

    async def _own_turn(self, key: ChatKey, in_group: bool) -> None:
        if self._shared is not None and await self._shared.take(key, group=in_group) is not None:
            return
        group = self._group(key)
        if group is not None:
            await group.acquire()
        if self._overall is not None:
            await self._overall.acquire(GROUP_PATIENCE if in_group else 0.0)

    def stop_waiting(self, grace: float) -> None:
        """The bot is stopping: a send still waiting for its turn ``grace`` seconds from now, or
        asking for one after that, gives up with ``Stopping`` instead of holding the stop.

        A stopping Application waits for every handler, and a handler waits for its send's turn:
        with a group's replies queued at 20 a minute, a stop waited for the whole queue (29 s for
        ten replies), past what a service manager allows (docker: 10 s) before it kills."""
        stopped = self._stop_signal()
        asyncio.get_running_loop().call_later(grace, lambda: stopped.done() or stopped.set_result(None))

    def _stop_signal(self) -> asyncio.Future[None]:
        if self._stopped is None:
            self._stopped = asyncio.get_running_loop().create_future()
        return self._stopped

    async def _take_turn(self, key: ChatKey | None) -> None:
        """Wait for a turn of ``key``: its own, or one another send of this process passed on."""
        if key is None:
            return  # callback answers, getUpdates, getMe: no chat, no bucket
        in_group = self._in_group(key)
        if self._shared is None and self._free_now(key):  # no wait: no waiting send to set up
            await self._own_turn(key, in_group)
            self.stats.taken += 1
            return
        stopped = self._stop_signal()
        if stopped.done():
            raise Stopping(key)
        loop = asyncio.get_running_loop()
        passed: asyncio.Future[None] = loop.create_future()
        self._waiting[passed] = (key, in_group, loop.time() + (GROUP_PATIENCE if in_group else 0.0))
        own = asyncio.ensure_future(self._own_turn(key, in_group))
        try:
            await asyncio.wait((passed, own, stopped), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._give_up(passed, own, key, in_group)
            raise
        if not passed.done() and not own.done():  # the bot's stop ran out of patience first
            self._give_up(passed, own, key, in_group)
            raise Stopping(key)
        self._waiting.pop(passed, None)
        if passed.done() and not passed.cancelled():
            self._pass_on_when_it_comes(own, key, in_group)
        else:
            passed.cancel()
            own.result()  # (the database's errors are handled inside: the in-memory share)
        self.stats.taken += 1

    def _give_up(self, passed: asyncio.Future[None], own: asyncio.Future[None], key: ChatKey, in_group: bool) -> None:
        """A send stops waiting: a turn already passed to it, and its own when it comes, go on."""
        self._waiting.pop(passed, None)
        if passed.done() and not passed.cancelled():
            self._pass_on(key, in_group)
        passed.cancel()
        self._pass_on_when_it_comes(own, key, in_group)

    def _pass_on_when_it_comes(self, own: asyncio.Future[None], key: ChatKey, in_group: bool) -> None:
        """A send was served by a passed turn (or gave up): its own turn goes on to another send."""
        if own.done():
            if not own.cancelled() and own.exception() is None:
                self._pass_on(key, in_group)
            return
        self._coming.add(own)

        def came(done: asyncio.Future[None]) -> None:
            self._coming.discard(done)
            if not done.cancelled() and done.exception() is None:
                self._pass_on(key, in_group)

        own.add_done_callback(came)

    def _pass_on(self, key: ChatKey, in_group: bool) -> None:
        """A turn of ``key`` is free now: to the send that may use it with the earliest deadline, as
        the bot's bucket orders them (a group's turn counts against the bot and that group, so it
        serves that group or a private chat; a private chat's counts against the bot only, so it
        serves private chats)."""
        usable = [(deadline, waiter) for waiter, (wants, wants_group, deadline) in self._waiting.items()
                  if not waiter.done() and (not wants_group or (in_group and wants == key))]
        if not usable:
            self.stats.lost += 1
            return
        _, waiter = min(usable, key=lambda found: found[0])  # min() keeps the first of equal deadlines
        del self._waiting[waiter]
        waiter.set_result(None)
        self.stats.passed += 1

    @contextlib.asynccontextmanager
    async def slot(self, chat_id: int) -> AsyncIterator[None]:
        """Wait for ``chat_id``'s turn; the task's next API call to that chat inside uses it. A
        turn the slot leaves unused goes to another send at once."""
        key = chat_key(chat_id)
        await self._take_turn(key)
        token = _ADMITTED.set(key)
        try:
            yield
        finally:
            unused = key is not None and _ADMITTED.get() == key
            _ADMITTED.reset(token)
            if unused:
                assert key is not None
                self.stats.unused += 1
                self._pass_on(key, self._in_group(key))

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, ApiResult]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> ApiResult:
        fit_request(data)
        key = None if not_a_message(endpoint) else chat_key(data.get("chat_id"))
        admitted = key is not None and _ADMITTED.get() == key
        if admitted:
            _ADMITTED.set(None)  # one call per turn
        flood_retries = server_retries = 0
        floor = self._known.newest(key)
        while True:
            if not admitted:
                await self._take_turn(key)
            admitted = False
            await self._clear.wait()
            try:
                if key is None:  # a callback answer (or getMe...): never waits behind a chat's upload
                    result = await callback(*args, **kwargs)
                else:
                    if self._pace is not None:
                        await self._pace.acquire()
                    async with self._chat_calls:
                        result = await callback(*args, **kwargs)
                self._known.note(key, result)
                if server_retries and endpoint in SENDS:  # an earlier attempt may have been applied
                    await delete_copies(callback, kwargs, endpoint, data, result, self._known, key, floor)
                return result
            except RetryAfter as error:
                if flood_retries >= (rate_limit_args or self._retries):
                    raise
                flood_retries += 1
                with warnings.catch_warnings():  # PTB 22 warns that the type will change; both are read
                    warnings.simplefilter("ignore", PTBDeprecationWarning)
                    wait = error.retry_after
                delay = (wait.total_seconds() if isinstance(wait, timedelta) else float(wait)) + 0.1
                log.info("%s: flood limit hit; every request waits %.1f s", endpoint, delay)
                self._clear.clear()
                try:
                    if self._shared is not None:  # every worker waits, not only this one
                        await self._shared.hold(delay)
                    await asyncio.sleep(delay)
                finally:
                    self._clear.set()
            except BadRequest as error:
                if server_retries and already_done(endpoint, error):
                    return True  # the lost first attempt made the change: what Telegram returns for an edit
                raise
            except TimedOut:
                raise
            except NetworkError as error:
                if server_retries >= self._server_error_retries:
                    raise
                delay = self._backoff * 2**server_retries
                log.warning("%s failed (%s); retrying in %.1fs", endpoint, error, delay)
                await asyncio.sleep(delay)
                server_retries += 1
