"""Group commit: many tables' units of work share one SQLite transaction and one fsync.

Every storage call is a *unit*: a block of statements that must happen whole or not at all.
Units queue here; a single writer task opens a transaction, runs each waiting unit inside
its own ``SAVEPOINT`` (so a unit that fails rolls back alone and its caller gets the error),
keeps taking units that arrived meanwhile (up to ``max_batch``), then commits once and only
then tells each caller its unit is done. A caller therefore never returns before its write
is durable, yet when 200 tables write at once they pay for a handful of fsyncs, not 200.

With ``max_batch=1`` this is exactly one transaction per unit behind a lock.

``run(body)`` queues a unit whose statements are an ``async`` function of the connection. Given
``hop`` (SQLite: :func:`storage.onehop.thread_hop`), the writer runs such units that wait next to
each other, with their BEGIN, SAVEPOINTs and COMMIT, as *one* function on the database thread
(:mod:`storage.onehop`): one round trip for the whole batch instead of one per statement.
Without ``hop`` (PostgreSQL) ``run`` is a plain ``unit()`` around the body. ``begin`` is the
statement that opens a batch: SQLite's ``BEGIN IMMEDIATE`` takes the write lock at once;
PostgreSQL (:mod:`storage.postgres`) has plain ``BEGIN`` and locks rows as they are written.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, TypeVar

import aiosqlite

from storage.interface import StorageError
from storage.onehop import Body, ThreadConnection, run_to_end

T = TypeVar("T")
Hop = Callable[[Callable[[sqlite3.Connection], Any]], Awaitable[Any]]


class _Unit:
    __slots__ = ("abandoned", "body_done", "granted", "settled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.granted: asyncio.Future[None] = loop.create_future()  # the writer opened our savepoint
        self.body_done: asyncio.Future[BaseException | None] = loop.create_future()
        self.settled: asyncio.Future[None] = loop.create_future()  # committed (or the commit failed)
        self.abandoned = False  # the caller went away before its turn


class _HopUnit:
    """A unit given as a body, to run on the database thread with its neighbours (``run``)."""

    __slots__ = ("abandoned", "body", "result")

    def __init__(self, loop: asyncio.AbstractEventLoop, body: Body[Any]) -> None:
        self.body = body
        self.result: asyncio.Future[Any] = loop.create_future()
        self.abandoned = False


def _failed(cause: BaseException) -> StorageError:
    """A fresh error per caller (one exception object raised in many tasks tangles tracebacks)."""
    error = StorageError(f"the write was not committed: {cause}")
    error.__cause__ = cause
    return error


class GroupCommitter:
    def __init__(self, db: aiosqlite.Connection, max_batch: int = 256, begin: str = "BEGIN IMMEDIATE",
                 hop: Hop | None = None) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._db = db
        self._max_batch = max_batch
        self._begin = begin
        self._hop = hop
        self._queue: deque[_Unit | _HopUnit] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._closed = False

    @asynccontextmanager
    async def unit(self) -> AsyncIterator[aiosqlite.Connection]:
        """Run the block as one all-or-nothing unit; returns once it is committed."""
        if self._closed:
            raise RuntimeError("storage is closed")
        unit = _Unit(asyncio.get_running_loop())
        self._queue.append(unit)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_batches(), name="storage-writer")
        try:
            await asyncio.shield(unit.granted)
        except asyncio.CancelledError:
            if unit.granted.done() and not unit.granted.cancelled() and unit.granted.exception() is None:
                unit.body_done.set_result(asyncio.CancelledError())
            else:
                unit.abandoned = True
            raise
        try:
            yield self._db
        except BaseException as exc:
            unit.body_done.set_result(exc)
            with suppress(Exception):
                await asyncio.shield(unit.settled)
            raise
        unit.body_done.set_result(None)
        await asyncio.shield(unit.settled)

    async def run(self, body: Body[T]) -> T:
        """Run ``body(connection)`` as one all-or-nothing unit; returns its result once committed."""
        if self._hop is None:
            async with self.unit() as db:
                return await body(db)
        if self._closed:
            raise RuntimeError("storage is closed")
        unit = _HopUnit(asyncio.get_running_loop(), body)
        self._queue.append(unit)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_batches(), name="storage-writer")
        try:
            return await asyncio.shield(unit.result)  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            unit.abandoned = True  # skipped if not yet taken; once on the thread it still commits
            unit.result.add_done_callback(lambda f: f.cancelled() or f.exception())
            raise

    async def _write_batches(self) -> None:
        while self._queue:
            if isinstance(self._queue[0], _HopUnit):
                await self._hop_batch()
            else:
                await self._one_batch()

    async def _hop_batch(self) -> None:
        """The hop units at the front of the queue, in one transaction, in one call on the thread."""
        assert self._hop is not None
        units: list[_HopUnit] = []
        while self._queue and isinstance(self._queue[0], _HopUnit) and len(units) < self._max_batch:
            unit = self._queue.popleft()
            if not unit.abandoned:
                units.append(unit)  # type: ignore[arg-type]
        outcomes: list[tuple[bool, Any]] = []  # (the body succeeded, its result or error), in order
        begin = self._begin

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(begin)
            try:
                for unit in units:
                    conn.execute("SAVEPOINT unit")
                    try:
                        value = run_to_end(unit.body(ThreadConnection(conn)))
                    except Exception as error:
                        conn.execute("ROLLBACK TO unit")
                        outcomes.append((False, error))
                    else:
                        outcomes.append((True, value))
                    conn.execute("RELEASE unit")
                conn.execute("COMMIT")
            except BaseException:
                with suppress(Exception):
                    conn.execute("ROLLBACK")
                raise

        if not units:
            return
        try:
            await self._hop(work)
        except BaseException as exc:
            for i, unit in enumerate(units):
                if not unit.result.done():
                    own = i < len(outcomes) and not outcomes[i][0]
                    unit.result.set_exception(outcomes[i][1] if own else _failed(exc))
            if not isinstance(exc, Exception):
                raise
            return
        for unit, (succeeded, value) in zip(units, outcomes, strict=True):
            if not unit.result.done():
                if succeeded:
                    unit.result.set_result(value)
                else:
                    unit.result.set_exception(value)

    async def _one_batch(self) -> None:
        db = self._db
        done: list[tuple[_Unit, bool]] = []  # (unit, its body succeeded)
        current: _Unit | None = None
        try:
            await db.execute(self._begin)
            while self._queue and len(done) < self._max_batch and not isinstance(self._queue[0], _HopUnit):
                current = self._queue.popleft()  # type: ignore[assignment]
                assert current is not None
                if current.abandoned:
                    current = None
                    continue
                await db.execute("SAVEPOINT unit")
                if current.abandoned:  # its caller was cancelled while the savepoint opened
                    await db.execute("RELEASE unit")
                    current = None
                    continue
                current.granted.set_result(None)
                error = await current.body_done
                if error is not None:
                    await db.execute("ROLLBACK TO unit")
                await db.execute("RELEASE unit")
                done.append((current, error is None))
                current = None
            await db.execute("COMMIT")
        except BaseException as exc:
            with suppress(Exception):
                await db.execute("ROLLBACK")
            while current is None and not done and self._queue:
                # The transaction itself could not start (e.g. another process held the write
                # lock past busy_timeout): fail the next caller instead of retrying forever.
                candidate = self._queue.popleft()
                if isinstance(candidate, _HopUnit):
                    if not candidate.abandoned:
                        candidate.result.set_exception(_failed(exc))
                        break
                    continue
                current = None if candidate.abandoned else candidate
            if current is not None:
                if current.granted.done():
                    done.append((current, True))
                else:
                    current.granted.set_exception(_failed(exc))
                    current.settled.set_result(None)
            for unit, succeeded in done:
                if not unit.settled.done():
                    if succeeded:  # its statements ran but were never committed
                        unit.settled.set_exception(_failed(exc))
                    else:  # it raised its own error already
                        unit.settled.set_result(None)
            if not isinstance(exc, Exception):
                raise
            return
        for unit, _ in done:
            unit.settled.set_result(None)

    async def close(self) -> None:
        """Let queued units finish, then refuse new ones."""
        self._closed = True
        if self._writer is not None:
            with suppress(Exception):
                await self._writer
