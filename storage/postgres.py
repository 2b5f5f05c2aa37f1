"""The PostgreSQL implementation of :class:`storage.interface.Storage` on asyncpg.

It runs the very method bodies of the SQLite implementation (the feature mixins speak the SQL
both databases share; :mod:`storage.pg_connection` translates placeholders and row values),
so every rule of the data — sequence numbers, duplicates, seat transfers, voids, undos,
``verify()`` — is written once. Units of work go through the same group commit
(:mod:`storage.group_commit`) on one connection per process: each unit in a savepoint, units
that arrive together in one transaction, a caller returns only once its unit is committed.

Start-up applies the missing steps of :mod:`storage.schema_postgres` while holding a
session advisory lock, so two workers started together on one database migrate it once:
the second waits, then finds nothing left to do.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial, wraps
from typing import Any, TypeVar

import asyncpg

from storage import days
from storage.factory import redacted
from storage.group_commit import GroupCommitter
from storage.interface import StorageError
from storage.pg_connection import CONNECTION_LOST, PgConnection
from storage.pg_locks import CHAT_LOCK_CLASS, TABLE_LOCK_CLASS, AdvisoryLocks
from storage.schema import Migration
from storage.schema_postgres import MIGRATIONS, VERSION_TABLE
from storage.sqlite_base import Clock, now_utc
from storage.sqlite_books import LedgerQueries
from storage.sqlite_outbox import OutboxAndMigration
from storage.sqlite_people import ChatsAndPlayers
from storage.sqlite_play import TablesAndHands
from storage.sqlite_scores import Scorekeeping
from storage.sqlite_workers import WorkersCoordination

T = TypeVar("T")

# pg_advisory_lock key held while migrating ("xuezhan" in ASCII); advisory locks are per database.
MIGRATION_LOCK = 0x7875657A68616E
# SQLite's synchronous levels as PostgreSQL's synchronous_commit: NORMAL and OFF may lose the
# latest commits in a power cut (never corrupt anything); a killed client loses nothing either way.
_SYNCHRONOUS_COMMIT = {"FULL": "on", "EXTRA": "on", "NORMAL": "off", "OFF": "off"}


async def open_postgres(
    url: str,
    *,
    clock: Clock = now_utc,
    synchronous: str = "FULL",
    migrations: Sequence[Migration] = MIGRATIONS,
    max_batch: int = 256,
    default_language: str = "zh",
    default_timezone: str = "Asia/Shanghai",
) -> PostgresStorage:
    """Connect to ``url`` (``postgresql://user:password@host:port/database``, or a socket
    directory with ``?host=/path``) and bring the schema up to date; the options are
    :func:`storage.sqlite.open_storage`'s."""
    level = _SYNCHRONOUS_COMMIT.get(synchronous.upper())
    if level is None:
        raise StorageError(f"synchronous must be one of {', '.join(_SYNCHRONOUS_COMMIT)}, not {synchronous!r}")
    connect: Callable[[], Awaitable[asyncpg.Connection]] = partial(
        _connect, url, {"synchronous_commit": level, "timezone": "UTC"}
    )
    raw = await connect()
    try:
        await migrate(raw, migrations)
    finally:
        await raw.close()
    db = await PgConnection.open(connect)
    store = PostgresStorage(db, clock, max_batch, (default_language, days.zone(default_timezone).key))
    store.locks = AdvisoryLocks(connect)
    return store


async def _connect(url: str, settings: dict[str, str]) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(url, server_settings=settings)
    except (OSError, asyncpg.PostgresError, ValueError) as exc:
        raise StorageError(f"cannot connect to PostgreSQL at {redacted(url)}: {exc}") from exc


async def migrate(conn: asyncpg.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the missing steps, each with its version bump in one transaction; returns the version.

    The whole check-and-apply holds ``pg_advisory_lock(MIGRATION_LOCK)``, so concurrent
    start-ups take turns; a killed process's lock goes with its connection."""
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER NOT NULL)")
        version = await conn.fetchval(f"SELECT version FROM {VERSION_TABLE}")
        if version is None:
            version = 0
            await conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (0)")
        if version > len(migrations):
            raise StorageError(
                f"database schema version {version} is newer than this program knows ({len(migrations)}); "
                "upgrade xuezhan"
            )
        for number in range(version, len(migrations)):
            async with conn.transaction():
                for statement in migrations[number]:
                    await conn.execute(statement)
                await conn.execute(f"UPDATE {VERSION_TABLE} SET version = $1", number + 1)
        return len(migrations)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)


# Two workers racing for the same row: one waits for the other's commit, then hits its unique key
# (both created chat -100 or logged action 7 of a hand) or a deadlock. The loser's unit was rolled
# back whole, so running it again is safe, and it then finds the winner's row: an existing chat,
# a DUPLICATE or a SequenceConflict — what it would have found had it come second.
_RACES = (asyncpg.UniqueViolationError, asyncpg.DeadlockDetectedError)
RACE_ATTEMPTS = 3
CLOSE_WAIT_SECONDS = 10.0


def _rerun_lost_races(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    async def attempts(self: Any, *args: Any, **kwargs: Any) -> T:
        for attempt in range(1, RACE_ATTEMPTS + 1):
            try:
                return await method(self, *args, **kwargs)
            except _RACES:
                if attempt == RACE_ATTEMPTS:
                    raise
            except CONNECTION_LOST as error:  # the server went away mid-unit: the unit was not committed
                raise StorageError(f"the database connection was lost: {error}") from error
        raise AssertionError("unreachable")

    @wraps(method)
    async def rerun(self: Any, *args: Any, **kwargs: Any) -> T:
        # A unit runs to its end even if its caller is cancelled (a view dropped mid-read, a table
        # closed mid-write): cut off between a statement and its answer, the connection that every
        # unit shares would be left "in progress" for the next one. The caller sees the cancel.
        unit = asyncio.ensure_future(attempts(self, *args, **kwargs))
        unit.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._units.add(unit)
        unit.add_done_callback(self._units.discard)
        return await asyncio.shield(unit)

    return rerun


class PostgresStorage(ChatsAndPlayers, TablesAndHands, Scorekeeping, LedgerQueries, OutboxAndMigration,
                      WorkersCoordination):
    """Chats, players, tables, hands, the action log and the ledger in a PostgreSQL database.

    Every public method is one unit of work that is run again if it lost a race with another
    process for a row (see ``_rerun_lost_races``). Several processes may serve the same tables
    (``shared``): each takes a table's advisory lock (``table_lock``) for a decision, and timers
    are claimed with ``FOR UPDATE SKIP LOCKED`` so that two workers never fire the same one."""

    _CLAIM_LOCKING = " FOR UPDATE SKIP LOCKED"
    locks: AdvisoryLocks

    def __init__(
        self,
        db: PgConnection,
        clock: Clock = now_utc,
        max_batch: int = 256,
        chat_defaults: tuple[str, str] = ("zh", "Asia/Shanghai"),
    ) -> None:
        super().__init__(db, clock, max_batch, chat_defaults)  # type: ignore[arg-type]
        self._committer = GroupCommitter(db, max_batch, begin="BEGIN")  # type: ignore[arg-type]
        self._units: set[asyncio.Future[Any]] = set()  # units under way, some with their callers gone

    @property
    def shared(self) -> bool:
        return True

    @asynccontextmanager
    async def table_lock(self, table_id: int) -> AsyncIterator[None]:
        """Hold the table's advisory lock for the block (see storage/pg_locks.py)."""
        async with self._advisory((TABLE_LOCK_CLASS, table_id)):
            yield

    @asynccontextmanager
    async def chat_lock(self, chat_id: int) -> AsyncIterator[None]:
        """Hold the chat's advisory lock for the block (its lobby's changes, one at a time)."""
        async with self._advisory((CHAT_LOCK_CLASS, chat_id)):
            yield

    async def join_workers(self) -> int:
        """Mark this process as a live worker while it runs; how many others are (storage/pg_locks.py)."""
        return await self.locks.join_workers()

    @asynccontextmanager
    async def _advisory(self, key: tuple[int, int]) -> AsyncIterator[None]:
        await self.locks.acquire(key)
        try:
            yield
        finally:
            await self.locks.release(key)

    async def close(self) -> None:
        """Close once the units under way are through: those whose callers were cancelled (a view
        dropped at shut-down) still run, and would be left pending when the event loop stops."""
        if self._units:
            await asyncio.wait(set(self._units), timeout=CLOSE_WAIT_SECONDS)
        await self.locks.close()
        await super().close()

    async def schema_version(self) -> int:
        async with self._tx() as db:
            (version,) = await self._one(db, f"SELECT version FROM {VERSION_TABLE}")
        return int(version)


def _wrap_public_methods(cls: type) -> None:
    """Every public unit of work, including those that later mixins add, reruns lost races."""
    for name in dir(cls):
        method = getattr(cls, name)
        if not name.startswith("_") and name != "close" and inspect.iscoroutinefunction(method) \
                and not getattr(method, "__wrapped__", None):
            setattr(cls, name, _rerun_lost_races(method))


_wrap_public_methods(PostgresStorage)
