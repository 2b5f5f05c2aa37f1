"""Copy a SQLite database into PostgreSQL, row for row (``xuezhan migrate``).

Both are opened with :func:`storage.open_storage` first, so both carry the current schema
(the two dialects have the same tables and columns; ``tests/test_storage_postgres.py`` holds
them to it). Every table of the SQLite file is then copied in foreign-key order, ids
included, inside **one** PostgreSQL transaction: a failed copy leaves the target as it was.
Rows already in the target are overwritten with the source's (an *upsert* on the primary
key), so running it again after the source moved on brings the target up to date; rows the
target has and the source lacks mean someone else writes there, and the copy refuses to
touch it. Identity sequences are moved past the copied ids so that new rows never collide.

:func:`differences` then compares the two databases table by table, every column of every
row; ``cli/migrate.py`` adds the checks that need the referee (every hand replayed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite
import asyncpg

from storage.factory import open_storage
from storage.interface import StorageError

# Held while copying (pg_advisory_xact_lock), so two copies into one database take turns.
COPY_LOCK = 0x7875657A68616F


class CopyRefused(StorageError):
    """The target holds rows the source does not: it is not a copy of this source."""


@dataclass(frozen=True, slots=True)
class TableShape:
    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]


async def sqlite_tables(db: aiosqlite.Connection) -> list[TableShape]:
    """Every table of the file, each after the tables its foreign keys point at."""
    names = [row[0] for row in await db.execute_fetchall(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    shapes: dict[str, TableShape] = {}
    parents: dict[str, set[str]] = {}
    for name in names:
        info = list(await db.execute_fetchall(f"PRAGMA table_info({name})"))
        key = tuple(row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        shapes[name] = TableShape(name, tuple(row[1] for row in info), key)
        parents[name] = {row[2] for row in await db.execute_fetchall(f"PRAGMA foreign_key_list({name})")} - {name}
    ordered: list[TableShape] = []
    while parents:
        ready = sorted(name for name, needs in parents.items() if not needs - {t.name for t in ordered})
        if not ready:
            raise StorageError(f"foreign keys form a cycle among {sorted(parents)}")
        for name in ready:
            ordered.append(shapes[name])
            del parents[name]
    return ordered


async def _source_rows(db: aiosqlite.Connection, table: TableShape) -> list[tuple[Any, ...]]:
    order = ", ".join(table.key) or "rowid"
    return [tuple(row) for row in await db.execute_fetchall(
        f"SELECT {', '.join(table.columns)} FROM {table.name} ORDER BY {order}")]


async def _target_rows(conn: asyncpg.Connection, table: TableShape) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in await conn.fetch(f"SELECT {', '.join(table.columns)} FROM {table.name}")]


def _upsert(table: TableShape) -> str:
    values = ", ".join(f"${i}" for i in range(1, len(table.columns) + 1))
    sql = f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES ({values}) ON CONFLICT "
    rest = [c for c in table.columns if c not in table.key]
    if not table.key:
        return sql + "DO NOTHING"
    if not rest:
        return sql + f"({', '.join(table.key)}) DO NOTHING"
    return sql + f"({', '.join(table.key)}) DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)


def _keys(rows: Sequence[tuple[Any, ...]], table: TableShape) -> set[tuple[Any, ...]]:
    return set(_by_key(rows, table))


async def copy_rows(source: aiosqlite.Connection, target: asyncpg.Connection) -> dict[str, int]:
    """Copy every row of ``source`` into ``target`` in one transaction; rows per table."""
    tables = await sqlite_tables(source)
    copied: dict[str, int] = {}
    async with target.transaction():
        await target.execute("SELECT pg_advisory_xact_lock($1)", COPY_LOCK)
        rows = {table.name: await _source_rows(source, table) for table in tables}
        for table in tables:
            foreign = _keys(await _target_rows(target, table), table) - _keys(rows[table.name], table)
            if foreign:
                raise CopyRefused(
                    f"the target's table {table.name} has {len(foreign)} row(s) the source does not have "
                    "(is a bot already writing there?); nothing was copied"
                )
        for table in tables:
            if rows[table.name]:
                await target.executemany(_upsert(table), rows[table.name])
            copied[table.name] = len(rows[table.name])
            if "id" in table.columns:
                await target.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {table.name}), false) "
                    f"WHERE pg_get_serial_sequence('{table.name}', 'id') IS NOT NULL"
                )
    return copied


async def differences(source: aiosqlite.Connection, target: asyncpg.Connection) -> list[str]:
    """Every table whose rows differ between the two (its counts, or the first differing row)."""
    found = []
    for table in await sqlite_tables(source):
        mine = _by_key(await _source_rows(source, table), table)
        theirs = _by_key(await _target_rows(target, table), table)
        if len(mine) != len(theirs):
            found.append(f"{table.name}: {len(mine)} rows in the source, {len(theirs)} in the target")
            continue
        for key, row in sorted(mine.items()):
            if theirs.get(key) != row:
                found.append(f"{table.name}: source row {row} is {theirs.get(key)} in the target")
                break
    return found


def _by_key(rows: Sequence[tuple[Any, ...]], table: TableShape) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Rows by primary key (compared in Python: the two databases may collate text differently)."""
    positions = [table.columns.index(c) for c in table.key] or range(len(table.columns))
    return {tuple(row[i] for i in positions): row for row in rows}


@dataclass(frozen=True, slots=True)
class CopyReport:
    rows: dict[str, int]  # table -> rows copied (all of the source's)
    differences: list[str]  # empty when the target now holds exactly the source's rows
    chats: list[int]
    hands: list[int]


async def copy_database(source_path: str, target_url: str) -> CopyReport:
    """Bring both schemas up to date, copy every row, compare every row."""
    for opened in (await open_storage(source_path), await open_storage(target_url)):
        await opened.close()
    source = await aiosqlite.connect(source_path)
    try:
        target = await asyncpg.connect(target_url)
        try:
            rows = await copy_rows(source, target)
            found = await differences(source, target)
            chats = [r[0] for r in await target.fetch("SELECT id FROM chats ORDER BY id")]
            hands = [r[0] for r in await target.fetch("SELECT id FROM hands ORDER BY id")]
        finally:
            await target.close()
    finally:
        await source.close()
    return CopyReport(rows, found, chats, hands)
