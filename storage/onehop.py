"""Units of work that run whole on SQLite's thread: one hop from the event loop, not one per statement.

aiosqlite runs every statement on its own thread and hands the result back to the event loop, so
a unit of eight statements costs eight round trips between the threads (measured 10-44x slower
than the same statements run on that thread at once). The storage mixins are written once as
``async`` bodies over the aiosqlite API, because PostgreSQL (:mod:`storage.postgres`) awaits the
very same bodies; for SQLite, :class:`ThreadConnection` offers that API *synchronously* on the raw
``sqlite3`` connection, so a body never suspends and :func:`run_to_end` drives it to its end in a
single step, on the database thread, inside the group commit's BEGIN / SAVEPOINT / COMMIT.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Sequence
from typing import Any, TypeVar

import aiosqlite

T = TypeVar("T")
Body = Callable[[Any], Awaitable[T]]  # an async unit body over the aiosqlite API


class ThreadCursor:
    """The part of aiosqlite's cursor the mixins use."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()


class _Executed:
    """What ``execute`` returns: awaitable (the cursor) and an async context manager, as in aiosqlite."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = ThreadCursor(cursor)

    def __await__(self) -> Generator[Any, None, ThreadCursor]:
        return self._value().__await__()

    async def _value(self) -> ThreadCursor:
        return self._cursor

    async def __aenter__(self) -> ThreadCursor:
        return self._cursor

    async def __aexit__(self, *exc: object) -> None:
        return None


class ThreadConnection:
    """aiosqlite's connection API, run at once on the raw connection (call it on its thread only)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> _Executed:
        return _Executed(self._conn.execute(sql, params))

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> ThreadCursor:
        return ThreadCursor(self._conn.executemany(sql, rows))

    async def execute_fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self._conn.execute(sql, params).fetchall()


def run_to_end(body: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (a unit body over ``ThreadConnection``) to its result."""
    try:
        body.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    body.close()
    raise RuntimeError("a one-hop unit of work waited for something other than the database")


def thread_hop(db: aiosqlite.Connection) -> Callable[[Callable[[sqlite3.Connection], T]], Awaitable[T]]:
    """Run a function of the raw ``sqlite3`` connection on aiosqlite's thread, in one hop.

    aiosqlite 0.2x has no public call for this; ``_execute`` is the method its own statements use
    (it queues the function for the connection's thread), and ``_conn`` the connection there."""

    async def hop(work: Callable[[sqlite3.Connection], T]) -> T:
        return await db._execute(lambda: work(db._conn))  # type: ignore[no-any-return]

    return hop
