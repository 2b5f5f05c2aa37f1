"""Send times reserved in the database, so that every bot process counts against the same limits.

Telegram limits a bot as a whole (about 30 messages a second) and each group (about 20 a
minute), whichever process sends. One process keeps those limits with leaky buckets in memory
(``bot.ratelimit``); several workers keep them here, one row per bucket, with the generic cell
rate algorithm: a row holds the bucket's *theoretical arrival time* (``tat``, microseconds since
the epoch). A send reserves one turn of every bucket it counts against (a group message: the
group's and the bot's) **at one moment** ``s``, in one statement that locks those rows in key
order (on SQLite, one write transaction):

    s     = max(now, max over the buckets of (tat - (burst - 1) * interval))
    tat   = max(tat, s) + interval          for each of them
    wait  = s - now

For one bucket that admits exactly what a leaky bucket of ``burst`` turns draining one per
``interval`` admits (``aiolimiter.AsyncLimiter(burst, burst * interval)``), whichever process
asks, and a turn is never given twice: two processes asking at once are ordered by the row
locks. Taking the turns of both buckets at the same ``s`` matters: a group turn taken first and
used only once the bot's turn came would let later group sends bunch up behind the bot's queue.
A reserved turn cannot be handed back to the database; a process whose send ends up not needing
its turn passes it to another of its sends that waits (``bot.ratelimit``).

Rows are pruned: a bucket whose ``tat`` has passed gives exactly the turns a new bucket would
(``s = now``), so its row carries nothing and is deleted (each process, every ``PRUNE_EVERY``
seconds, rows ``PRUNE_AFTER`` seconds in the past). Otherwise every group the bot ever wrote to
would keep a row. A reservation that finds a row of its buckets gone (pruned meanwhile, by this
process or another) takes no turn at all, creates the rows and asks again.

On PostgreSQL ``now`` is the server's clock, read once the rows are locked, so machines whose
clocks differ still agree; SQLite (one machine) uses the process's. Each store has its own
connection(s) outside the group commit (``group_commit.py``): holding the bot's row until a batch
of game writes commits would make every worker wait for the others' batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import aiosqlite
import asyncpg

from storage.factory import describe, redacted
from storage.interface import StorageError

Turn = tuple[str, float, int]  # (bucket key, seconds between turns, burst)

_PG_NOW = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
_PG_CREATE = "INSERT INTO rate_slots (key, tat) SELECT unnest($1::text[]), 0 ON CONFLICT (key) DO NOTHING"
# One statement: lock the buckets' rows in key order, read the clock once they are held, take a
# turn of each at one moment s. The lock lasts one statement, not a client round trip.
_PG_RESERVE = f"""
    WITH want AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w (key, step, slack)),
    held AS (SELECT r.key, r.tat FROM rate_slots r JOIN want USING (key) ORDER BY r.key FOR UPDATE OF r),
    clock AS (SELECT {_PG_NOW} AS now, max(held.tat - want.slack) AS first, count(*) AS found
              FROM held JOIN want USING (key)),
    turn AS (SELECT GREATEST(now, first) AS s, now FROM clock WHERE found = cardinality($1::text[]))
    UPDATE rate_slots SET tat = GREATEST(rate_slots.tat, turn.s) + want.step
    FROM turn, want WHERE rate_slots.key = want.key
    RETURNING turn.s, turn.now
"""
_PG_HOLD = f"""
    INSERT INTO rate_slots (key, tat) VALUES ($1, {_PG_NOW} + $2)
    ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_slots.tat, excluded.tat)
"""
_PG_PRUNE = f"DELETE FROM rate_slots WHERE tat < {_PG_NOW} - $1"
_SQLITE_PRUNE = "DELETE FROM rate_slots WHERE tat < ? - ?"
_SQLITE_CREATE = "INSERT INTO rate_slots (key, tat) VALUES (?, 0) ON CONFLICT (key) DO NOTHING"
_SQLITE_SET = "UPDATE rate_slots SET tat = ? WHERE key = ?"
_SQLITE_HOLD = """
    INSERT INTO rate_slots (key, tat) VALUES (?, ? + ?)
    ON CONFLICT (key) DO UPDATE SET tat = MAX(rate_slots.tat, excluded.tat)
"""
TIMEOUT = 2.0  # a database that does not answer this fast is treated as away (the caller falls back)
PRUNE_EVERY = 600.0  # seconds between one process's prunes of past buckets
PRUNE_AFTER = 60.0  # a bucket whose tat is this many seconds in the past is deleted
# A connection the server dropped mid-statement may also answer "another operation is in progress"
# (asyncpg.InternalClientError) before it knows it is closed: that too is the database being away.
_FAILURES = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError,
             aiosqlite.Error)


class Grant(NamedTuple):
    """A reserved turn: when it is (seconds since the epoch, by the database's clock), and how long
    the caller waits for it."""

    at: float
    wait: float


def _micro(seconds: float) -> int:
    return max(1, round(seconds * 1_000_000))


def next_turn(now: int, rows: dict[str, int], turns: Sequence[Turn]) -> tuple[int, dict[str, int]]:
    """``(s, new tats)``: the first moment every bucket of ``turns`` has a turn, in microseconds."""
    at = max([now] + [rows[key] - (burst - 1) * _micro(interval) for key, interval, burst in turns])
    return at, {key: max(rows[key], at) + _micro(interval) for key, interval, _ in turns}


class RateSlots(ABC):
    """Turns of named buckets reserved in one database, shared by every process that opens it."""

    def __init__(self) -> None:
        self._known: set[str] = set()  # buckets whose row exists (no insert needed)
        self._pruned = time.monotonic()  # the first prune comes PRUNE_EVERY after opening

    async def reserve(self, turns: Sequence[Turn]) -> Grant:
        """Reserve one turn of each bucket in ``turns`` at one moment. Raises ``StorageError`` if
        the database cannot be reached."""
        ordered = sorted(turns)  # one lock order for every process
        try:
            at, now = await asyncio.wait_for(self._reserve(ordered), TIMEOUT)
        except _FAILURES as error:
            raise StorageError(f"cannot reserve a send turn ({type(error).__name__}: {error})") from error
        self._known.update(key for key, _, _ in ordered)
        if time.monotonic() - self._pruned >= PRUNE_EVERY:
            await self.prune()
        return Grant(at / 1_000_000, max(0, at - now) / 1_000_000)

    async def prune(self, after: float = PRUNE_AFTER) -> None:
        """Delete the buckets whose ``tat`` is ``after`` seconds in the past (they hold nothing a new
        row would not). Best effort: a failure leaves them for the next prune."""
        self._pruned = time.monotonic()
        self._known.clear()  # rows this process knew may be gone, by its prune or another's
        with contextlib.suppress(*_FAILURES):
            await asyncio.wait_for(self._prune(_micro(after)), TIMEOUT)

    async def hold(self, key: str, seconds: float, interval: float, burst: int) -> None:
        """No turn of bucket ``key`` before ``seconds`` from now (Telegram answered 429 with
        ``retry_after``: every process waits, not only the one that was told)."""
        ahead = _micro(seconds) + (burst - 1) * _micro(interval)
        try:
            await asyncio.wait_for(self._hold(key, ahead), TIMEOUT)
        except _FAILURES as error:
            raise StorageError(f"cannot hold the send turns ({type(error).__name__}: {error})") from error

    @abstractmethod
    async def _reserve(self, turns: Sequence[Turn]) -> tuple[int, int]:
        """``(s, now)`` after taking the turns (see the module's docstring), in microseconds."""

    @abstractmethod
    async def _hold(self, key: str, ahead: int) -> None:
        """Move bucket ``key``'s ``tat`` to at least ``ahead`` microseconds from now."""

    @abstractmethod
    async def _prune(self, after: int) -> None:
        """Delete the rows whose ``tat`` is more than ``after`` microseconds in the past."""

    @abstractmethod
    async def close(self) -> None:
        """Close the connection(s)."""


class PostgresRateSlots(RateSlots):
    """A small asyncpg pool: a dropped connection (server restarted) is replaced on the next turn."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__()
        self._pool = pool

    async def _reserve(self, turns: Sequence[Turn]) -> tuple[int, int]:
        keys = [key for key, _, _ in turns]
        steps = [_micro(interval) for _, interval, _ in turns]
        slack = [(burst - 1) * step for (_, _, burst), step in zip(turns, steps, strict=True)]
        async with self._pool.acquire() as conn:
            if not self._known.issuperset(keys):
                await conn.execute(_PG_CREATE, keys)
            row = await conn.fetchrow(_PG_RESERVE, keys, steps, slack)
            if row is None:  # a row was pruned since this process created it: no turn was taken
                await conn.execute(_PG_CREATE, keys)
                row = await conn.fetchrow(_PG_RESERVE, keys, steps, slack)
        if row is None:
            raise OSError("the send turns' rows keep disappearing")
        return row["s"], row["now"]

    async def _hold(self, key: str, ahead: int) -> None:
        async with self._pool.acquire() as conn:
            await conn.execute(_PG_HOLD, key, ahead)

    async def _prune(self, after: int) -> None:
        async with self._pool.acquire() as conn:
            await conn.execute(_PG_PRUNE, after)

    async def close(self) -> None:
        await self._pool.close()


class SqliteRateSlots(RateSlots):
    """Its own connection to the file; processes on the file take turns on its write lock."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        super().__init__()
        self._conn = conn
        self._lock = asyncio.Lock()  # one transaction at a time on the connection

    async def _reserve(self, turns: Sequence[Turn]) -> tuple[int, int]:
        keys = [key for key, _, _ in turns]
        async with self._lock:
            return await self._locked_reserve(keys, turns)

    async def _locked_reserve(self, keys: list[str], turns: Sequence[Turn]) -> tuple[int, int]:
        await self._conn.execute("BEGIN IMMEDIATE")
        try:
            await self._conn.executemany(_SQLITE_CREATE, [(key,) for key in keys])
            marks = ", ".join("?" * len(keys))
            rows = await self._conn.execute_fetchall(f"SELECT key, tat FROM rate_slots WHERE key IN ({marks})", keys)
            now = time.time_ns() // 1000  # read with the write lock held
            at, tats = next_turn(now, dict(rows), turns)  # type: ignore[arg-type]
            await self._conn.executemany(_SQLITE_SET, [(tat, key) for key, tat in tats.items()])
            await self._conn.execute("COMMIT")
        except BaseException:
            await self._conn.execute("ROLLBACK")
            raise
        return at, now

    async def _hold(self, key: str, ahead: int) -> None:
        async with self._lock:
            await self._conn.execute(_SQLITE_HOLD, (key, time.time_ns() // 1000, ahead))

    async def _prune(self, after: int) -> None:
        async with self._lock:
            await self._conn.execute(_SQLITE_PRUNE, (time.time_ns() // 1000, after))

    async def close(self) -> None:
        await self._conn.close()


async def open_rate_slots(target: str | Path) -> RateSlots:
    """The send turns of the database ``target`` (as ``XUEZHAN_DB``), whose schema is migrated
    (``open_storage`` did that)."""
    backend, where = describe(target)
    try:
        if backend == "postgresql":
            # A turn's row needs no durability (a crash loses at most the last fraction of a second of
            # turns, which Telegram's 429 covers), and its row lock is held until the commit returns:
            # waiting for the WAL's fsync there made every worker's turns queue behind it.
            pool = await asyncpg.create_pool(where, min_size=0, max_size=4, timeout=TIMEOUT,
                                             max_inactive_connection_lifetime=60,
                                             server_settings={"synchronous_commit": "off"})
            return PostgresRateSlots(pool)
        conn = await aiosqlite.connect(where, isolation_level=None)
        await conn.execute("PRAGMA busy_timeout = 2000")
        return SqliteRateSlots(conn)
    except _FAILURES as error:
        raise StorageError(f"cannot open send turns in {redacted(target)} ({error})") from error
