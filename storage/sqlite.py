"""The SQLite implementation of :class:`storage.interface.Storage` on aiosqlite.

One connection per process, in WAL mode, and one writer task that runs every unit of work
in turn (:mod:`storage.group_commit`): all tables of all chats go through the same event
loop, so SQLite never sees two writers from this process and "database is locked" cannot
happen (``busy_timeout`` covers other processes, such as ``xuezhan export`` while the bot
runs). Each unit is all-or-nothing; units that arrive together share one commit. Why this
and not a connection pool: see docs/storage.md.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import aiosqlite

from storage import days
from storage.checkpoint import BACKSTOP_PAGES, BackgroundCheckpointer
from storage.interface import StorageError
from storage.onehop import thread_hop
from storage.schema import MIGRATIONS, Migration
from storage.sqlite_base import Clock, now_utc
from storage.sqlite_books import LedgerQueries
from storage.sqlite_outbox import OutboxAndMigration
from storage.sqlite_people import ChatsAndPlayers
from storage.sqlite_play import TablesAndHands
from storage.sqlite_scores import Scorekeeping
from storage.sqlite_workers import WorkersCoordination

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


async def open_storage(
    path: str | Path,
    *,
    clock: Clock = now_utc,
    synchronous: str = "FULL",
    migrations: Sequence[Migration] = MIGRATIONS,
    max_batch: int = 256,
    default_language: str = "zh",
    default_timezone: str = "Asia/Shanghai",
) -> SqliteStorage:
    """Open (or create) the database file and bring its schema up to date.

    ``synchronous="FULL"`` makes every commit durable across a power cut; ``"NORMAL"`` is
    still safe against a crashed or killed process in WAL mode and is faster.
    ``clock`` gives the time stamped on every row (tests and simulations inject theirs).
    ``max_batch`` caps how many concurrent units share one commit (1 = a commit per unit).
    ``default_language`` / ``default_timezone`` are given to a chat seen for the first time
    (the bot passes its XUEZHAN_LANG / XUEZHAN_TZ).
    """
    if synchronous.upper() not in _SYNCHRONOUS:
        raise StorageError(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}, not {synchronous!r}")
    db = await aiosqlite.connect(str(path), isolation_level=None)
    try:
        await db.execute("PRAGMA busy_timeout = 10000")
        (mode,) = await (await db.execute("PRAGMA journal_mode = WAL")).fetchone()  # type: ignore[misc]
        if str(mode).lower() != "wal" and str(path) != ":memory:":
            raise StorageError(f"could not switch {path} to WAL mode (got {mode})")
        await db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        await db.execute("PRAGMA foreign_keys = ON")
        await _migrate(db, migrations)
        checkpoints = None
        if str(path) != ":memory:":  # checkpoints off the commit path (storage/checkpoint.py)
            await db.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
            checkpoints = BackgroundCheckpointer(path, synchronous.upper())
            checkpoints.start()
    except BaseException:
        await db.close()
        raise
    storage = SqliteStorage(db, clock, max_batch, (default_language, days.zone(default_timezone).key))
    storage._checkpoints = checkpoints
    return storage


async def _migrate(db: aiosqlite.Connection, migrations: Sequence[Migration]) -> None:
    """Apply the missing forward migrations and the version bump in one transaction, in one hop to
    the database thread: a new database's start-up paid a commit (an fsync) per migration and a
    thread round trip per statement, 20-120 ms of the bot's time to polling."""

    def apply(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")  # the version is read inside: a second process waits, then finds it done
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version > len(migrations):
                raise StorageError(f"database schema version {version} is newer than this program knows "
                                   f"({len(migrations)}); upgrade xuezhan")
            for migration in migrations[version:]:
                for statement in migration:
                    conn.execute(statement)
            if version < len(migrations):
                conn.execute(f"PRAGMA user_version = {len(migrations)}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    await thread_hop(db)(apply)


class SqliteStorage(ChatsAndPlayers, TablesAndHands, Scorekeeping, LedgerQueries, OutboxAndMigration,
                    WorkersCoordination):
    """Chats, players, tables, hands, the action log and the ledger in one SQLite file."""

    _checkpoints: BackgroundCheckpointer | None = None

    async def close(self) -> None:
        if self._checkpoints is not None:
            await asyncio.to_thread(self._checkpoints.stop)
        await super().close()
