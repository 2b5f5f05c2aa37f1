"""``open_storage(target)``: the one place that turns ``XUEZHAN_DB`` into a storage.

- ``postgresql://…`` (or ``postgres://…``): :class:`storage.postgres.PostgresStorage`;
- ``sqlite:///path`` or a plain path: :class:`storage.sqlite.SqliteStorage`, the default.

Both take the same options (see :func:`storage.sqlite.open_storage`); ``migrations`` defaults
to the chosen backend's own list.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.interface import StorageError
from storage.schema import Migration

if TYPE_CHECKING:
    from storage.postgres import PostgresStorage
    from storage.sqlite import SqliteStorage

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SQLITE_SCHEME = "sqlite:///"


def describe(target: str | Path) -> tuple[str, str]:
    """``(backend, where)``: ``("postgresql", url)`` or ``("sqlite", file path)``.

    >>> describe("sqlite:///data/x.db"), describe("sqlite:////srv/x.db"), describe("x.db")
    (('sqlite', 'data/x.db'), ('sqlite', '/srv/x.db'), ('sqlite', 'x.db'))
    >>> describe("postgresql://bot@db/xuezhan")
    ('postgresql', 'postgresql://bot@db/xuezhan')
    """
    text = str(target).strip()
    if text.startswith(POSTGRES_SCHEMES):
        return "postgresql", text
    if text.startswith(SQLITE_SCHEME):
        path = text[len(SQLITE_SCHEME):]
        if not path:
            raise StorageError("sqlite:/// needs a file path, e.g. sqlite:///xuezhan.db")
        return "sqlite", path
    if "://" in text:
        raise StorageError(f"unknown database {text!r}: use a file path, sqlite:///path or postgresql://…")
    return "sqlite", text


def redacted(target: str | Path) -> str:
    """``target`` fit for a log line or an error message: a URL's password is replaced by ``***``.

    >>> redacted("postgresql://bot:s3cret@db:5432/xuezhan"), redacted("xuezhan.db")
    ('postgresql://bot:***@db:5432/xuezhan', 'xuezhan.db')
    """
    text = str(target)
    scheme, sep, rest = text.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return text
    return f"{scheme}{sep}{credentials.split(':', 1)[0]}:***@{host}"


async def open_storage(
    target: str | Path, *, migrations: Sequence[Migration] | None = None, **options: Any
) -> SqliteStorage | PostgresStorage:
    """Open (creating or migrating as needed) the database that ``target`` names."""
    backend, where = describe(target)
    if migrations is not None:
        options["migrations"] = migrations
    if backend == "postgresql":
        from storage.postgres import open_postgres  # asyncpg is loaded only when it is used

        return await open_postgres(where, **options)
    from storage.sqlite import open_storage as open_sqlite

    return await open_sqlite(where, **options)
