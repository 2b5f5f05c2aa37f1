"""An asyncpg connection that takes the statements the storage mixins write.

The feature mixins (``sqlite_people``, ``sqlite_play``, ``sqlite_scores``, ``sqlite_books``) are
written in the SQL that SQLite and PostgreSQL share, against the small part of the aiosqlite
API they use: ``execute`` / ``executemany`` / ``execute_fetchall`` with ``?`` or ``:name``
parameters, ``fetchone`` and ``lastrowid`` on the cursor. :class:`PgConnection` offers exactly
that part on top of asyncpg, so :class:`storage.postgres.PostgresStorage` runs the same method
bodies — one implementation of every rule (sequence numbers, duplicates, seat transfers,
voids, undos), two databases. What differs between the dialects is only what this module
translates:

- ``?`` and ``:name`` placeholders become ``$1``, ``$2`` ... (never inside a quoted literal);
- ``SUM`` of integers is ``numeric`` in PostgreSQL; rows come back with plain ``int`` (the
  schema holds no fractional numbers);
- ``lastrowid`` is the ``id`` an ``INSERT`` created, read with ``RETURNING id`` for the tables
  whose ``id`` is generated (found in the catalog when the connection opens, so a table added
  by a later migration is covered).

The connection reconnects when a transaction begins on a connection the server dropped
(PostgreSQL restarted): the failed unit's caller got an error, the next one goes through.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import asyncpg

Params = Sequence[Any] | Mapping[str, Any]

_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"])*\"|::|\?|(?<![:\w]):([A-Za-z_]\w*)")
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+([A-Za-z_]\w*)", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_BEGIN = re.compile(r"^\s*BEGIN\b", re.IGNORECASE)
_RELEASE = re.compile(r"^\s*RELEASE\b", re.IGNORECASE)
_COMMIT = re.compile(r"^\s*COMMIT\s*$", re.IGNORECASE)
_ROLLBACK_ALL = re.compile(r"^\s*ROLLBACK\s*$", re.IGNORECASE)
# What a connection the server dropped says (when a transaction begins on it). Besides "closed",
# a restart's FATAL "terminating connection due to administrator command" may still be in
# flight, or already read while the socket's end was not: asyncpg then reports "cannot switch
# to state 15; another operation (2) is in progress" (it still waits for the end of that error).
CONNECTION_LOST = (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.InternalClientError,
            asyncpg.exceptions.OperatorInterventionError, OSError)
_CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|CREATE|ALTER|DROP|SET|LOCK)\b", re.IGNORECASE)


def translate(sql: str, params: Params = ()) -> tuple[str, list[Any]]:
    """``?`` / ``:name`` placeholders -> ``$n`` and the argument list in that order.

    >>> translate("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?", (1, 2))
    ("SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2", [1, 2])
    >>> translate("SELECT :x, :y, :x, '23:59'", {"x": 1, "y": 2})
    ("SELECT $1, $2, $1, '23:59'", [1, 2])
    """
    named = isinstance(params, Mapping)
    args: list[Any] = []
    numbers: dict[str, int] = {}
    positional = iter(()) if named else iter(params)

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            if named:
                raise ValueError("'?' placeholder with named parameters")
            args.append(next(positional))
            return f"${len(args)}"
        name = match.group(1)
        if name is None:  # a quoted literal or a cast: left as written
            return token
        if not named:
            raise ValueError(f"':{name}' placeholder needs named parameters")
        if name not in numbers:
            args.append(params[name])  # type: ignore[index]
            numbers[name] = len(args)
        return f"${numbers[name]}"

    text = _TOKEN.sub(replace, sql)
    if not named and next(positional, _END) is not _END:
        raise ValueError("more parameters than placeholders")
    return text, args


_END = object()


def plain(row: Iterable[Any]) -> tuple[Any, ...]:
    """A row as a tuple, with PostgreSQL's ``numeric`` sums back as ``int``."""
    return tuple(int(value) if isinstance(value, Decimal) else value for value in row)


class PgCursor:
    """The rows of one statement; awaitable and an async context manager, like aiosqlite's."""

    def __init__(self, run: Callable[[], Awaitable[tuple[list[tuple[Any, ...]], int | None]]]) -> None:
        self._run = run
        self._rows: list[tuple[Any, ...]] = []
        self.lastrowid: int | None = None

    async def _execute(self) -> PgCursor:
        self._rows, self.lastrowid = await self._run()
        return self

    def __await__(self) -> Generator[Any, None, PgCursor]:
        return self._execute().__await__()

    async def __aenter__(self) -> PgCursor:
        return await self._execute()

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None

    async def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows, []
        return rows


class PgConnection:
    """One asyncpg connection behind the aiosqlite-shaped API the storage mixins use."""

    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]], conn: asyncpg.Connection) -> None:
        self._connect = connect
        self.raw = conn
        self._generated_ids: frozenset[str] = frozenset()
        self._pending: list[str] = []  # BEGIN / RELEASE held back to travel with the next statement

    @classmethod
    async def open(cls, connect: Callable[[], Awaitable[asyncpg.Connection]]) -> PgConnection:
        connection = cls(connect, await connect())
        await connection.learn_schema()
        return connection

    async def learn_schema(self) -> None:
        """Remember which tables generate their ``id`` (call again after migrating)."""
        rows = await self.raw.fetch(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND column_name = 'id' AND (is_identity = 'YES' OR column_default LIKE 'nextval%')"
        )
        self._generated_ids = frozenset(row[0] for row in rows)

    def execute(self, sql: str, params: Params = ()) -> PgCursor:
        return PgCursor(lambda: self._run(sql, params))

    async def _run(self, sql: str, params: Params) -> tuple[list[tuple[Any, ...]], int | None]:
        text, args = translate(sql, params)
        if not args and _CONTROL.match(text):
            await self._control(text)
            return [], None
        await self._flush()
        insert = _INSERT_INTO.match(text)
        if insert is not None and insert.group(1) in self._generated_ids and not _RETURNING.search(text):
            (row,) = await self.raw.fetch(text + " RETURNING id", *args)
            return [], row[0]
        rows = await self.raw.fetch(text, *args)
        return [plain(row) for row in rows], None

    async def _control(self, text: str) -> None:
        """Transaction control, with as few round trips as the order of statements allows.

        Each is a round trip to the server, and the group commit issues several per unit
        (BEGIN, SAVEPOINT, RELEASE, COMMIT) around a handful of real statements. ``BEGIN`` and
        ``RELEASE`` are therefore held back and sent in one message with the next statement
        (``BEGIN; SAVEPOINT unit``, ``RELEASE unit; SAVEPOINT unit``); a ``COMMIT`` makes a
        pending ``RELEASE`` needless and a ``ROLLBACK`` any pending statement.
        """
        if _BEGIN.match(text) or _RELEASE.match(text):
            self._pending.append(text)
            return
        if _COMMIT.match(text):
            self._pending = [p for p in self._pending if not _RELEASE.match(p)]  # COMMIT releases them all
            if self._pending:  # a BEGIN never sent: an empty transaction, nothing to commit
                self._pending = []
                return
        elif _ROLLBACK_ALL.match(text):
            never_sent = any(_BEGIN.match(p) for p in self._pending)
            self._pending = []
            if never_sent:
                return
        self._pending.append(text)
        await self._flush()

    async def _flush(self) -> None:
        """Send the held-back control statements (see ``_control``) in one message."""
        if not self._pending:
            return
        text, self._pending = "; ".join(self._pending), []
        if not _BEGIN.match(text):
            await self.raw.execute(text)  # the simple protocol: several statements, no parameters
            return
        # A transaction begins: on a new connection if the server dropped ours (restarted);
        # nothing has been done in it yet, so starting over there loses nothing.
        if self.raw.is_closed():
            self.raw = await self._connect()
        try:
            await self.raw.execute(text)
        except CONNECTION_LOST:
            self.raw.terminate()
            self.raw = await self._connect()
            await self.raw.execute(text)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        batch = list(rows)
        if not batch:
            return
        await self._flush()
        text, _ = translate(sql, batch[0])
        await self.raw.executemany(text, [translate(sql, row)[1] for row in batch])

    async def execute_fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        rows, _ = await self._run(sql, params)
        return rows

    async def close(self) -> None:
        if not self.raw.is_closed():
            await self.raw.close()
