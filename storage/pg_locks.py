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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from storage.interface import StorageError

# Advisory keys are (class, object) pairs of 32-bit ints: this class is "XZ", the object a table id.
TABLE_LOCK_CLASS = 0x585A
FIRST_WAIT_SECONDS = 0.002
MAX_WAIT_SECONDS = 0.05


class AdvisoryLocks:
    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]]) -> None:
        self._connect = connect
        self._conn: asyncpg.Connection | None = None
        self._io = asyncio.Lock()  # one statement at a time on the connection
        # Advisory locks are re-entrant within a session: tasks of this process queue here first.
        self._local: dict[int, tuple[asyncio.Lock, int]] = {}  # table id -> (lock, tasks using it)

    async def _call(self, sql: str, *args: Any) -> Any:
        async with self._io:
            if self._conn is None or self._conn.is_closed():
                self._conn = await self._connect()
            try:
                return await self._conn.fetchval(sql, *args)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
                self._conn.terminate()
                self._conn = None
                raise StorageError(f"the table lock is out of reach: {error}") from error

    async def acquire(self, table_id: int) -> None:
        """Wait until this task holds the table's lock (against this process's other tasks and
        against other processes)."""
        local, users = self._local.get(table_id, (asyncio.Lock(), 0))
        self._local[table_id] = (local, users + 1)
        try:
            await local.acquire()
            try:
                await self._acquire_shared(table_id)
            except BaseException:
                local.release()
                raise
        except BaseException:
            self._forget(table_id)
            raise

    def _forget(self, table_id: int) -> None:
        local, users = self._local[table_id]
        if users == 1:
            del self._local[table_id]
        else:
            self._local[table_id] = (local, users - 1)

    async def _acquire_shared(self, table_id: int) -> None:
        wait = FIRST_WAIT_SECONDS
        while not await self._call("SELECT pg_try_advisory_lock($1, $2)", TABLE_LOCK_CLASS, _object(table_id)):
            await asyncio.sleep(wait)
            wait = min(wait * 2, MAX_WAIT_SECONDS)

    async def release(self, table_id: int) -> None:
        """Let go of the table's lock (a lock lost with a dropped connection is already gone)."""
        try:
            await self._call("SELECT pg_advisory_unlock($1, $2)", TABLE_LOCK_CLASS, _object(table_id))
        except StorageError:
            pass
        finally:
            self._local[table_id][0].release()
            self._forget(table_id)

    async def close(self) -> None:
        async with self._io:
            if self._conn is not None and not self._conn.is_closed():
                await self._conn.close()
            self._conn = None


def _object(table_id: int) -> int:
    """A table id as the 32-bit half of an advisory key (ids wrap only past two billion tables)."""
    return (table_id + 2**31) % 2**32 - 2**31
