"""Timers in the database, for several bot workers sharing the tables.

With one process, a table's decision deadlines are jobs on PTB's ``JobQueue``
(``bot.table.tables.JobQueueScheduler``). With several workers on one PostgreSQL database, a
deadline set by one worker must fire even if that worker dies, and fire once, wherever the
next press for the table goes. So ``DatabaseScheduler`` keeps the timers as rows
(``storage.set_timers``) and every worker polls for due ones (``storage.claim_timers``, which
takes each with ``FOR UPDATE SKIP LOCKED``): exactly one worker claims a due row; one that
claimed it and died leaves a claim older than the lease, and another takes it over.

Firing goes through ``fire(timer)`` (``Tables.fire``), which finds the table's live hand on
*this* worker (catching its copy up from the log) rather than a callback of the worker that set
the timer. A runner names what it sets with ``start``/``cancel`` during a step, and ``flush``
writes them in one unit before the step lets go of the table, so the next worker to hold the
table sees them. The worker that set a timer also wakes itself for it, so a deadline fires on
time, not at the next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from storage import Storage
from storage.models import JSON, Timer

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
LEASE_SECONDS = 15.0  # a claim older than this is a dead (or hung) worker's: another takes it over

CLOCK_SLACK_SECONDS = 0.02  # due times are the database's milliseconds; look a moment after them

Fire = Callable[[Timer], Awaitable[None]]


def worker_name() -> str:
    """This process among the workers, for the claims it makes (host and pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class DatabaseScheduler:
    """The runner's ``Scheduler`` with its timers in the database (see the module's doc)."""

    def __init__(self, storage: Storage, fire: Fire, *, worker: str | None = None,
                 poll_seconds: float = POLL_SECONDS, lease_seconds: float = LEASE_SECONDS) -> None:
        self.storage = storage
        self.fire = fire
        self.worker = worker or worker_name()
        self.poll_seconds = poll_seconds
        self.lease_seconds = lease_seconds
        self._pending: dict[str, tuple[float, JSON] | None] = {}
        self._next_due = math.inf  # monotonic time of the soonest timer this worker set
        self._sleep_until = -math.inf  # when the poller claims next
        self._wake = asyncio.Event()
        self._poller: asyncio.Task[None] | None = None
        self._firing: set[asyncio.Task[None]] = set()

    # --- the runner's side: named during a step, written before it ends ----------------------

    def start(self, name: str, delay: float, callback: Callable[[], Awaitable[None]],
              data: JSON | None = None) -> None:
        """Set ``name`` due in ``delay`` seconds; any worker fires it through ``fire`` (the callback
        is this worker's, so it is not what fires)."""
        self._pending[name] = (max(delay, 0.0), data or {})

    def cancel(self, name: str) -> None:
        self._pending[name] = None

    async def flush(self) -> None:
        """Write the timers set and cancelled since the last flush, in one unit. If the database
        cannot take them now they stay pending (newer ones win) and the poller tries again: a step
        whose move is saved does not fail over its timers."""
        if not self._pending:
            return
        changes, self._pending = self._pending, {}
        try:
            await self.storage.set_timers(changes)
        except Exception as error:
            log.warning("could not save %d timers (%s); trying again shortly", len(changes), error)
            self._pending = {**changes, **self._pending}
            return
        soonest = min((change[0] for change in changes.values() if change is not None), default=None)
        if soonest is not None:
            due = time.monotonic() + soonest + CLOCK_SLACK_SECONDS
            self._next_due = min(self._next_due, due)
            if due < self._sleep_until:
                self._wake.set()  # due before the poller would look again

    # --- firing ------------------------------------------------------------------------------

    def begin(self) -> None:
        """Start polling (and firing) on the running loop."""
        if self._poller is None:
            self._poller = asyncio.get_running_loop().create_task(self._poll(), name="xz-db-timers")

    async def _poll(self) -> None:
        """Claim what is due every ``poll_seconds``, and at the due time of a timer set here."""
        while True:
            now = time.monotonic()
            if now >= self._sleep_until:
                await self.flush()  # timers a step could not save
                try:
                    claimed = await self.storage.claim_timers(self.worker, self.lease_seconds)
                except Exception as error:  # the database is away: try again at the next poll
                    log.warning("could not claim due timers: %s", error)
                    claimed = []
                for timer in claimed:
                    task = asyncio.get_running_loop().create_task(self._fire(timer))
                    self._firing.add(task)
                    task.add_done_callback(self._firing.discard)
                now = time.monotonic()
                if self._next_due <= now:
                    self._next_due = math.inf
                self._sleep_until = min(now + self.poll_seconds, self._next_due)
            else:  # woken by a flush: a timer set here is due sooner
                self._sleep_until = min(self._sleep_until, self._next_due)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(self._sleep_until - now, 0.0))

    async def _fire(self, timer: Timer) -> None:
        try:
            await self.fire(timer)
        except Exception:  # left claimed: after the lease another worker (or this one) tries again
            log.exception("timer %s failed; it is tried again after %.0f s", timer.key, self.lease_seconds)
            return
        try:
            await self.storage.finish_timer(timer)
        except Exception as error:
            log.warning("timer %s fired but could not be removed (%s); its firing is checked again", timer.key,
                        error)

    async def close(self) -> None:
        """Stop polling; timers stay in the database for the other workers (and the next start)."""
        tasks: list[asyncio.Task[Any]] = [*self._firing]
        if self._poller is not None:
            tasks.append(self._poller)
            self._poller = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
