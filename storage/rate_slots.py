"""Send times reserved in the database, so that every bot process counts against the same limits.

Telegram limits a bot as a whole (about 30 messages a second) and each group (about 20 a
minute), whichever process sends. One process keeps those limits with leaky buckets in memory
(``bot.ratelimit``); several workers keep them here, one row per bucket, with the generic cell
rate algorithm: a row holds the bucket's *theoretical arrival time* (``tat``, microseconds since
the epoch). A send that reserves a turn moves it on by one ``interval`` in **one statement** — an
upsert that reads and writes the row under its row lock — and learns how long to wait:

    tat   = max(tat, now) + interval
    wait  = max(0, tat - burst * interval - now)

That admits exactly what a leaky bucket of ``burst`` turns draining one per ``interval`` admits
(``aiolimiter.AsyncLimiter(burst, burst * interval)``), whichever process asks, and a turn is
never given twice: two processes asking at once are ordered by the row lock. A reserved turn
cannot be handed back; a caller that gives up wastes it, which only slows the others a little.

On PostgreSQL ``now`` is the server's clock, so machines whose clocks differ still agree; SQLite
(one machine) uses the process's. Each store has its own connection(s) outside the group commit
(``group_commit.py``): a turn is one short autocommitted statement, and holding the bot's row
until a batch of game writes commits would make every worker wait for the others' batches.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from pathlib import Path

import aiosqlite
import asyncpg

from storage.factory import describe, redacted
from storage.interface import StorageError

_PG_NOW = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
_PG_RESERVE = f"""
    INSERT INTO rate_slots (key, tat) VALUES ($1, {_PG_NOW} + $2)
    ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_slots.tat + $2, excluded.tat)
    RETURNING tat, {_PG_NOW} AS now
"""
_SQLITE_RESERVE = """
    INSERT INTO rate_slots (key, tat) VALUES (?, ? + ?)
    ON CONFLICT (key) DO UPDATE SET tat = MAX(rate_slots.tat + ?, excluded.tat)
    RETURNING tat
"""
TIMEOUT = 2.0  # a database that does not answer this fast is treated as away (the caller falls back)


class RateSlots(ABC):
    """Turns of named buckets reserved in one database, shared by every process that opens it."""

    async def reserve(self, key: str, interval: float, burst: int) -> float:
        """Reserve the next turn of bucket ``key`` (one turn per ``interval`` seconds, ``burst`` at
        most at once); the seconds to wait before using it. Raises ``StorageError`` if the database
        cannot be reached."""
        step = max(1, round(interval * 1_000_000))
        try:
            tat, now = await asyncio.wait_for(self._reserve(key, step), TIMEOUT)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, aiosqlite.Error) as error:
            raise StorageError(f"cannot reserve a send turn ({type(error).__name__}: {error})") from error
        return max(0, tat - burst * step - now) / 1_000_000

    @abstractmethod
    async def _reserve(self, key: str, step: int) -> tuple[int, int]:
        """``(tat, now)`` after moving bucket ``key`` on by ``step`` microseconds."""

    @abstractmethod
    async def close(self) -> None:
        """Close the connection(s)."""


class PostgresRateSlots(RateSlots):
    """A small asyncpg pool: a dropped connection (server restarted) is replaced on the next turn."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def _reserve(self, key: str, step: int) -> tuple[int, int]:
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(_PG_RESERVE, key, step)
        return row["tat"], row["now"]

    async def close(self) -> None:
        await self._pool.close()


class SqliteRateSlots(RateSlots):
    """Its own autocommitting connection to the file; processes on the file take turns on its lock."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def _reserve(self, key: str, step: int) -> tuple[int, int]:
        now = time.time_ns() // 1000
        async with self._conn.execute(_SQLITE_RESERVE, (key, now, step, step)) as cursor:
            (tat,) = await cursor.fetchone()  # type: ignore[misc]
        return tat, now

    async def close(self) -> None:
        await self._conn.close()


async def open_rate_slots(target: str | Path) -> RateSlots:
    """The send turns of the database ``target`` (as ``XUEZHAN_DB``), whose schema is migrated
    (``open_storage`` did that)."""
    backend, where = describe(target)
    try:
        if backend == "postgresql":
            pool = await asyncpg.create_pool(where, min_size=1, max_size=4, timeout=TIMEOUT,
                                             max_inactive_connection_lifetime=60)
            return PostgresRateSlots(pool)
        conn = await aiosqlite.connect(where, isolation_level=None)
        await conn.execute("PRAGMA busy_timeout = 2000")
        return SqliteRateSlots(conn)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, aiosqlite.Error) as error:
        raise StorageError(f"cannot open send turns in {redacted(target)} ({error})") from error
