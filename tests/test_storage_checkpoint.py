"""WAL checkpoints in the background (storage/checkpoint.py): committed rows reach the main
database file without any commit running a checkpoint, and closing stops the thread."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
from pathlib import Path

from storage import open_storage
from storage.checkpoint import EVERY_SECONDS


def _tables_in_main_file(db: Path, copy: Path) -> int:
    """Rows of ``tables`` in the database file alone, as if its WAL were lost."""
    shutil.copyfile(db, copy)
    conn = sqlite3.connect(copy)
    try:
        return int(conn.execute("SELECT count(*) FROM tables").fetchone()[0])
    except sqlite3.OperationalError:  # not even the schema has been copied yet
        return 0
    finally:
        conn.close()


async def test_committed_rows_reach_the_database_file_in_the_background(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    others = set(_checkpoint_threads())  # storages another test of this process still holds open
    storage = await open_storage(db)
    ours = set(_checkpoint_threads()) - others
    assert len(ours) == 1
    try:
        await storage.get_chat(1)
        for user in range(1, 4):
            await storage.create_table(1, user)
        deadline = asyncio.get_running_loop().time() + 5 * EVERY_SECONDS + 5
        while _tables_in_main_file(db, tmp_path / "copy.db") < 3:
            assert asyncio.get_running_loop().time() < deadline, "no background checkpoint copied the rows"
            await asyncio.sleep(0.2)
    finally:
        await storage.close()
    assert not any(t.is_alive() for t in ours)


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sqlite-checkpoint" and t.is_alive()]


async def test_a_memory_database_has_no_checkpoint_thread() -> None:
    before = set(_checkpoint_threads())
    storage = await open_storage(":memory:")
    try:
        assert set(_checkpoint_threads()) <= before
    finally:
        await storage.close()
