"""Checks of ``XUEZHAN_DB`` before the bot starts, each ending in one sentence for the operator.

A database that cannot work (a directory, a read-only file, random bytes, a truncated file, a
half-made schema) should stop ``xuezhan run`` with a sentence naming the file and the trouble,
not a traceback from deep inside the first handler that touches it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from storage.factory import describe
from storage.interface import StorageError
from storage.schema import MIGRATIONS


def database_problem(target: str | Path) -> str | None:
    """What is wrong with the database ``target`` (None if nothing is, or it does not exist yet)."""
    try:
        backend, where = describe(target)
    except StorageError as error:
        return str(error)
    if backend != "sqlite" or where == ":memory:":
        return None  # a server database is checked when it is opened
    return sqlite_problem(Path(where))


def sqlite_problem(path: Path) -> str | None:
    if path.is_dir():
        return f"{path} is a directory, not a database file"
    if not path.exists():
        folder = path.parent
        if not folder.is_dir():
            return f"the folder of {path} does not exist"
        if not os.access(folder, os.W_OK):
            return f"{path} cannot be created: its folder is read-only"
        return None
    if not os.access(path, os.R_OK | os.W_OK):
        return f"{path} is read-only (the bot needs to write to it)"
    if path.stat().st_size == 0:
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        return f"{path} cannot be opened ({error})"
    try:
        (verdict,) = db.execute("PRAGMA quick_check(1)").fetchone()
        if verdict != "ok":
            return f"{path} is damaged ({verdict})"
        (version,) = db.execute("PRAGMA user_version").fetchone()
        found = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        return f"{path} is not a usable SQLite database ({error})"
    finally:
        db.close()
    if version > len(MIGRATIONS):
        return None  # open_storage says "newer than this program" in its own words
    missing = sorted(expected_tables(version) - found)
    if missing:
        return f"{path} has a half-made schema (version {version}, missing tables: {', '.join(missing)})"
    return None


def expected_tables(version: int) -> set[str]:
    """The tables a database at schema ``version`` has, from the migrations themselves."""
    db = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS[:version]:
            for statement in migration:
                db.execute(statement)
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()
