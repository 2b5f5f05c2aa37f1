"""What only the PostgreSQL backend has to show: its schema matches SQLite's step for step,
start-ups race safely for the migration, two processes racing for one row stay exactly-once,
and a restarted server is reconnected to. (Everything else runs on both backends in
test_storage*.py.)"""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from storage import (
    AppendOutcome,
    HandClosed,
    SeatTransfer,
    SequenceConflict,
    StorageError,
    open_storage,
    schema_postgres,
)
from storage import schema as sqlite_schema
from storage.factory import describe, redacted

CHAT = -3003


@pytest.fixture
async def empty_url(postgres_server):
    """A database with no tables at all: opening it runs every migration."""
    url = await postgres_server.create_database(migrated=False)
    yield url
    await postgres_server.drop_database(url)


async def _columns_and_indexes_sqlite(path) -> tuple[dict[str, set[str]], set[str]]:
    store = await open_storage(path)
    try:
        tables = [r[0] for r in await store._all(store._db, "SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = {t: {r[1] for r in await store._all(store._db, f"PRAGMA table_info({t})")} for t in tables}
        indexes = {r[0] for r in await store._all(
            store._db, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    finally:
        await store.close()
    return columns, indexes


async def _columns_and_indexes_postgres(url) -> tuple[dict[str, set[str]], set[str]]:
    conn = await asyncpg.connect(url)
    try:
        columns: dict[str, set[str]] = {}
        for table, column in await conn.fetch(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ):
            columns.setdefault(table, set()).add(column)
        indexes = {r[0] for r in await conn.fetch(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' "
            "AND indexname NOT LIKE '%_key'")}
    finally:
        await conn.close()
    return columns, indexes


async def test_the_postgresql_schema_is_the_sqlite_schema_step_for_step(empty_url, tmp_path):
    assert len(schema_postgres.MIGRATIONS) == len(sqlite_schema.MIGRATIONS), (
        "append the PostgreSQL dialect of every new storage/schema.py step to storage/schema_postgres.py"
    )
    await (await open_storage(empty_url)).close()
    lite_columns, lite_indexes = await _columns_and_indexes_sqlite(tmp_path / "s.db")
    pg_columns, pg_indexes = await _columns_and_indexes_postgres(empty_url)
    assert pg_columns.pop(schema_postgres.VERSION_TABLE) == {"version"}
    assert pg_columns == lite_columns
    assert pg_indexes == lite_indexes


async def test_workers_starting_together_migrate_once(empty_url):
    stores = await asyncio.gather(*(open_storage(empty_url) for _ in range(4)))
    try:
        assert [await s.schema_version() for s in stores] == [len(schema_postgres.MIGRATIONS)] * 4
        await stores[0].get_chat(CHAT)
        assert (await stores[3].get_chat(CHAT)).timezone == "Asia/Shanghai"
    finally:
        for store in stores:
            await store.close()


async def test_a_newer_database_is_refused_and_a_failing_step_changes_nothing(empty_url):
    extra = (*schema_postgres.MIGRATIONS, ("CREATE TABLE notes (id BIGINT PRIMARY KEY, text TEXT)",))
    store = await open_storage(empty_url, migrations=extra)
    assert await store.schema_version() == len(extra)
    await store.close()
    with pytest.raises(StorageError, match="newer than this program"):
        await open_storage(empty_url)
    broken = (*extra, ("CREATE TABLE ok (id BIGINT)", "THIS IS NOT SQL"))
    with pytest.raises(asyncpg.PostgresSyntaxError):
        await open_storage(empty_url, migrations=broken)
    store = await open_storage(empty_url, migrations=extra)
    try:
        assert await store.schema_version() == len(extra)
        assert await store._one(store._db, "SELECT to_regclass('ok')") == (None,)  # the step rolled back whole
    finally:
        await store.close()


async def _seated_hand(store):
    players = [await store.named_player(CHAT, name) for name in "ABCD"]
    table = await store.create_table(CHAT, None)
    for seat, player in enumerate(players):
        await store.set_seat(table.id, seat, player.id)
    return await store.start_hand(table.id, {}, seed=1, dealer=0), players


async def test_two_workers_pressing_at_once_write_each_action_once(postgres_server):
    url = await postgres_server.create_database()
    first, second = await open_storage(url), await open_storage(url)
    try:
        hand, _ = await _seated_hand(first)
        for seq in range(20):
            action, pay = {"seq": seq}, [SeatTransfer(seq % 4, (seq + 1) % 4, 1, "t")]
            outcomes = await asyncio.gather(
                first.append_action(hand.id, seq, action, pay), second.append_action(hand.id, seq, action, pay))
            assert sorted(o.outcome for o in outcomes) == [AppendOutcome.DUPLICATE, AppendOutcome.WRITTEN]
        # A brand-new chat seen by both at once is created once.
        chats = await asyncio.gather(first.get_chat(-77), second.get_chat(-77))
        assert chats[0] == chats[1]
        assert len(await first.ledger(CHAT)) == 20 and await second.verify() == []
    finally:
        await first.close()
        await second.close()
        await postgres_server.drop_database(url)


async def test_a_restarted_server_is_reconnected_to_and_nothing_is_lost(postgres_server):
    url = await postgres_server.create_database()
    store = await open_storage(url)
    try:
        hand, _ = await _seated_hand(store)
        await store.append_action(hand.id, 0, {"a": 0}, [SeatTransfer(0, 1, 2, "t")])
        await asyncio.to_thread(postgres_server.restart)
        assert (await store.append_action(hand.id, 1, {"a": 1}, [SeatTransfer(1, 2, 3, "t")])).outcome \
            is AppendOutcome.WRITTEN
        assert (await store.append_action(hand.id, 1, {"a": 1})).duplicate
        assert [a.seq for a in await store.hand_actions(hand.id)] == [0, 1]
        assert await store.verify() == []
    finally:
        await store.close()
        await postgres_server.drop_database(url)


async def test_writers_under_load_survive_a_server_restart_with_every_action_once(postgres_server):
    """Twelve tables write while PostgreSQL restarts; each writer retries what failed, as the
    bot's table runner does. Afterwards every log is whole and every chip booked once."""
    url = await postgres_server.create_database()
    store = await open_storage(url)
    failures = 0

    async def write(hand_id: int, seq: int) -> None:
        nonlocal failures
        while True:
            try:
                await store.append_action(hand_id, seq, {"seq": seq}, [SeatTransfer(seq % 4, (seq + 1) % 4, 1, "t")])
                return  # written, or found already written by an attempt whose reply was lost
            except (SequenceConflict, HandClosed):
                raise
            except Exception:  # the server is away: try again shortly
                failures += 1
                await asyncio.sleep(0.05)

    async def play(hand_id: int) -> None:
        for seq in range(40):
            await write(hand_id, seq)
            await asyncio.sleep(0.01)

    try:
        hands = []
        for t in range(12):
            players = [await store.named_player(CHAT, f"{t}-{seat}") for seat in range(4)]
            table = await store.create_table(CHAT, None)
            for seat, player in enumerate(players):
                await store.set_seat(table.id, seat, player.id)
            hands.append((await store.start_hand(table.id, {}, seed=t, dealer=0)).id)
        players = asyncio.gather(*(play(h) for h in hands))
        await asyncio.sleep(0.2)
        await asyncio.to_thread(postgres_server.restart)
        await players
        assert failures > 0  # the restart did hit writes in flight
        assert [[a.seq for a in await store.hand_actions(h)] for h in hands] == [list(range(40))] * 12
        assert len(await store.ledger(CHAT)) == 12 * 40 and await store.verify() == []
    finally:
        await store.close()
        await postgres_server.drop_database(url)


def test_database_targets_are_told_apart_and_passwords_never_shown():
    assert describe("postgres://u@h/d") == ("postgresql", "postgres://u@h/d")
    assert describe(" sqlite:///x.db ") == ("sqlite", "x.db")
    with pytest.raises(StorageError, match="unknown database"):
        describe("mysql://u@h/d")
    with pytest.raises(StorageError, match="needs a file path"):
        describe("sqlite:///")
    assert redacted("postgresql://bot:pw@h/d?host=/run") == "postgresql://bot:***@h/d?host=/run"


def test_postgres_storage_offers_every_method_of_sqlite_storage():
    from storage import SqliteStorage
    from storage.postgres import PostgresStorage

    public = {name for name in dir(SqliteStorage) if not name.startswith("_")}
    assert public - set(dir(PostgresStorage)) == set(), "add the new mixin to PostgresStorage (storage/postgres.py)"
