"""``xuezhan migrate``: a bot's SQLite file, played by the crash worker (real hands, voids,
scorekeeping and undos, cut off mid-hand by kill -9), copied into PostgreSQL and verified;
run again after more play; refused when the target is not a copy of the source."""

from __future__ import annotations

import asyncio
import random

import asyncpg
import pytest
from crash_worker import CHAT, kill_at_random

from cli.main import main
from storage import open_storage


@pytest.fixture
def target(postgres_server):
    url = asyncio.run(postgres_server.create_database(migrated=False))
    yield url
    asyncio.run(postgres_server.drop_database(url))


def play_for_a_while(path: str, seed: int) -> None:
    """One life of the crash worker on the file: it plays until killed while writing."""
    rng = random.Random(seed)
    while kill_at_random(path, seed, rng) != "writing":
        pass


async def books(url: str) -> tuple[list, list, list]:
    store = await open_storage(url)
    try:
        hands = await store.unfinished_hands()
        return await store.balances(CHAT), await store.ledger(CHAT), [u.hand.id for u in hands]
    finally:
        await store.close()


def test_a_played_file_is_copied_verified_and_brought_up_to_date(tmp_path, target, capsys):
    source = str(tmp_path / "bot.db")
    play_for_a_while(source, 1)
    assert main(["migrate", "--from", f"sqlite:///{source}", "--to", target]) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "hands replayed" in out
    assert asyncio.run(books(target)) == asyncio.run(books(source))

    assert main(["migrate", "--from", source, "--to", target]) == 0  # again: nothing changes
    play_for_a_while(source, 2)  # the source moved on: hands finished, new ones, more records
    assert main(["migrate", "--from", source, "--to", target]) == 0
    assert asyncio.run(books(target)) == asyncio.run(books(source))

    async def a_new_row_gets_a_fresh_id() -> None:
        store = await open_storage(target)
        try:
            table = await store.create_table(CHAT, None)
            assert table.id > max(t.id for t in await store.open_tables(CHAT) if t.id != table.id)
        finally:
            await store.close()

    asyncio.run(a_new_row_gets_a_fresh_id())


def test_a_target_with_rows_of_its_own_is_refused_untouched(tmp_path, target, capsys):
    source = str(tmp_path / "bot.db")
    play_for_a_while(source, 3)

    async def someone_else_writes_there() -> None:
        store = await open_storage(target)
        await store.get_chat(-999)
        await store.close()

    asyncio.run(someone_else_writes_there())
    assert main(["migrate", "--from", source, "--to", target]) == 1
    assert "nothing was copied" in capsys.readouterr().err

    async def tables_in_target() -> int:
        conn = await asyncpg.connect(target)
        try:
            return await conn.fetchval("SELECT COUNT(*) FROM tables")
        finally:
            await conn.close()

    assert asyncio.run(tables_in_target()) == 0


def test_bad_arguments_get_a_clear_answer(tmp_path, capsys):
    assert main(["migrate", "--from", str(tmp_path / "none.db"), "--to", "postgresql://u@h/d"]) == 2
    assert "no database file" in capsys.readouterr().err
    assert main(["migrate", "--from", "postgresql://u@h/d", "--to", "sqlite:///x.db"]) == 2
    assert "copies from SQLite" in capsys.readouterr().err
    assert main(["migrate", "--from", "x.db", "--to", "mysql://u@h/d"]) == 2
    assert "unknown database" in capsys.readouterr().err
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not a database, whatever its name" * 100)
    assert main(["migrate", "--from", str(notes), "--to", "postgresql://u@h/d"]) == 2
    assert "is not a usable SQLite database" in capsys.readouterr().err
