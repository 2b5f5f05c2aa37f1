"""Per-table locks across processes: PostgreSQL session advisory locks on a connection of their own.

A worker holds a table's lock for one decision: catching its copy of the hand up from the log,
applying the decision, logging it. That spans Python work between statements (the referee, a
computer player thinking), so it cannot be a lock inside the group commit's transaction, which
many tables share. Instead one extra connection per process holds the locks of every table this
process is deciding for; advisory locks are per session, so one connection can hold many.

Taking one is ``pg_try_advisory_lock`` in a short backoff loop rather than a blocking
``pg_advisory_lock``: a blocked call would hold the connection, and with it every other table's
lock and unlock, until the other process let go. Contention is rare (two presses for one table
arriving at two workers in the same instant), and the wait is a few milliseconds.

A worker killed while holding a lock loses its connection, and PostgreSQL drops the lock with it.

The same connection says that this process is a live worker: it holds a lock of its own for as long
as it runs (``join_workers``, taken again whenever the connection is new), so a worker that starts
can count the others in ``pg_locks``. Alive is exactly "its connection holds the lock": a killed
worker's goes with its connection, as its table locks do. A live worker whose connection dropped
(the server restarted) must not look dead for long, or a worker starting then would take itself for
the only one and resume every hand ("The bot is back"): once joined, a worker checks its connection
every ``HEARTBEAT_SECONDS`` and, if it is gone, opens a new one and takes its mark again. The old
session may still hold the mark for a while (the server has not yet noticed that the connection
dropped), so a mark not taken is tried again with every statement, heartbeats included, until it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from storage.interface import StorageError

Key = tuple[int, int]  # (what is locked, which one)

# Advisory keys are (class, object) pairs of 32-bit ints: the class says what is locked ("XZ" a
# table, "X[" a chat's lobby), the object which one (an id folded to 32 bits: two ids sharing a
# key only wait for each other).
TABLE_LOCK_CLASS = 0x585A
CHAT_LOCK_CLASS = 0x585B
WORKER_LOCK_CLASS = 0x585C  # one per live worker process, held for its life (a random object id)
JOINING_LOCK_CLASS = 0x585D  # held while a worker counts the others and marks itself: one at a time
FIRST_WAIT_SECONDS = 0.002
MAX_WAIT_SECONDS = 0.05
HEARTBEAT_SECONDS = 2.0  # how long a live worker's mark may stay lost after its connection dropped
TRY_LOCK = "SELECT pg_try_advisory_lock($1, $2)"
UNLOCK = "SELECT pg_advisory_unlock($1, $2)"
# Live workers of this database other than the asking session (advisory keys of two ints are
# (classid, objid) with objsubid 2 in pg_locks).
OTHER_WORKERS = """
    SELECT count(DISTINCT objid) FROM pg_locks
    WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted AND pid <> pg_backend_pid()
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


class AdvisoryLocks:
    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]]) -> None:
        self._connect = connect
        self._conn: asyncpg.Connection | None = None
        self._io = asyncio.Lock()  # one statement at a time on the connection
        # Advisory locks are re-entrant within a session: tasks of this process queue here first.
        self._local: dict[Key, tuple[asyncio.Lock, int]] = {}  # key -> (lock, tasks using it)
        self._background: set[asyncio.Future[Any]] = set()
        self._worker: Key | None = None  # this process's presence as a worker, once it joined
        self._marked = False  # whether the connection's session holds ``_worker``
        self._heartbeat: asyncio.Task[None] | None = None
        self._closed = False

    async def _call(self, sql: str, *args: Any) -> Any:
        """One statement on the lock connection, run to its end even if the caller is cancelled
        (a statement cut off mid-way would leave the connection busy for the next one)."""
        return await asyncio.shield(self._statement(sql, *args))

    async def _statement(self, sql: str, *args: Any) -> Any:
        async with self._io:
            if self._closed:  # a statement queued behind the shut-down: no new connection for it
                raise StorageError("the table locks are closed")
            try:
                if self._conn is None or self._conn.is_closed():
                    self._conn, self._marked = await self._connect(), False
                if self._worker is not None and not self._marked:
                    # A new session says again that this worker lives. The dropped one may still hold
                    # the mark until the server ends it: then it is tried again at the next statement.
                    self._marked = bool(await self._conn.fetchval(TRY_LOCK, *self._worker))
                return await self._conn.fetchval(sql, *args)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError) as error:
                if self._conn is not None:
                    self._conn.terminate()
                    self._conn, self._marked = None, False
                raise StorageError(f"the table lock is out of reach: {error}") from error

    async def acquire(self, key: Key) -> None:
        """Wait until this task holds the lock of ``key`` (``(TABLE_LOCK_CLASS, table id)``...),
        against this process's other tasks and against other processes."""
        local, users = self._local.get(key, (asyncio.Lock(), 0))
        self._local[key] = (local, users + 1)
        try:
            await local.acquire()
            try:
                await self._acquire_shared(key)
            except BaseException:
                local.release()
                raise
        except BaseException:
            self._forget(key)
            raise

    def _forget(self, key: Key) -> None:
        local, users = self._local[key]
        if users == 1:
            del self._local[key]
        else:
            self._local[key] = (local, users - 1)

    async def _acquire_shared(self, key: Key) -> None:
        wait = FIRST_WAIT_SECONDS
        while True:
            attempt = asyncio.ensure_future(self._statement(TRY_LOCK, key[0], _object(key[1])))
            try:
                taken = await asyncio.shield(attempt)
            except asyncio.CancelledError:  # the caller gave up: a lock the attempt took must not stay held
                attempt.add_done_callback(lambda done: self._give_back(key, done))
                raise
            if taken:
                return
            await asyncio.sleep(wait)
            wait = min(wait * 2, MAX_WAIT_SECONDS)

    def _give_back(self, key: Key, attempt: asyncio.Future[Any]) -> None:
        if not attempt.cancelled() and attempt.exception() is None and attempt.result():
            unlock = asyncio.ensure_future(self._call(UNLOCK, key[0], _object(key[1])))
            self._background.add(unlock)
            unlock.add_done_callback(self._background.discard)

    async def release(self, key: Key) -> None:
        """Let go of the lock (one lost with a dropped connection is already gone)."""
        try:
            await self._call(UNLOCK, key[0], _object(key[1]))
        except StorageError:
            pass
        finally:
            self._local[key][0].release()
            self._forget(key)

    async def join_workers(self) -> int:
        """Mark this process as a live worker for as long as it runs; the number of other live
        workers on the database (their connections hold their marks)."""
        if self._worker is not None:
            return int(await self._call(OTHER_WORKERS, WORKER_LOCK_CLASS))
        # One worker joins at a time: two starting together would each count the other, and
        # neither would take itself for the first.
        await self.acquire((JOINING_LOCK_CLASS, 0))
        try:
            others = int(await self._call(OTHER_WORKERS, WORKER_LOCK_CLASS))
            self._worker = (WORKER_LOCK_CLASS, _object(secrets.randbits(32)))
            await self._call("SELECT 1")  # a statement takes the mark first (a new key: it is free)
        finally:
            await self.release((JOINING_LOCK_CLASS, 0))
        self._heartbeat = asyncio.get_running_loop().create_task(self._stay_marked(), name="xz-worker-mark")
        return others

    async def _stay_marked(self) -> None:
        """Keep this worker's mark while it runs: a statement now and then, which opens a new
        connection (and takes the mark again) when the old one was dropped."""
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            with contextlib.suppress(StorageError):  # the database is away: the next beat tries again
                await self._call("SELECT 1")

    async def close(self) -> None:
        self._closed = True
        for unlock in list(self._background):
            with contextlib.suppress(Exception):
                await unlock
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        async with self._io:
            if self._conn is not None and not self._conn.is_closed():
                await self._conn.close()
            self._conn = None


def _object(ident: int) -> int:
    """An id as the 32-bit half of an advisory key."""
    return (ident + 2**31) % 2**32 - 2**31
