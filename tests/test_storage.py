"""Storage on a real SQLite file and a real PostgreSQL database: schema, tables and hands, the
action log, the ledger. Tests taking ``store`` or ``db_url`` run on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from storage import (
    AppendOutcome,
    HandClosed,
    HandStatus,
    InvalidWrite,
    NotFound,
    PlayerKind,
    SeatTransfer,
    SequenceConflict,
    Storage,
    StorageError,
    TableStatus,
    open_storage,
)
from storage.schema import MIGRATIONS

pytestmark = pytest.mark.both_backends

CHAT = -1001


class Clock:
    """A settable clock, so rows land on the days a test wants."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 1, 4, 0, tzinfo=UTC))  # 12:00 in Shanghai


@pytest.fixture
async def store(db_url, clock):
    opened = await open_storage(db_url, clock=clock)
    yield opened
    problems = await opened.verify()
    await opened.close()
    assert problems == []


async def seated_table(store, chat_id: int = CHAT, names=("A", "B", "C"), first_user: int = 100):
    """A table with three Telegram users and one computer player; returns (table, players)."""
    players = [await store.player_for_user(chat_id, first_user + i, name) for i, name in enumerate(names)]
    players.append(await store.named_player(chat_id, "电脑", PlayerKind.COMPUTER))
    table = await store.create_table(chat_id, players[0].user_id)
    for seat, player in enumerate(players):
        table = await store.set_seat(table.id, seat, player.id)
    return table, players


async def test_open_creates_schema_with_wal_and_foreign_keys(tmp_path):
    store = await open_storage(tmp_path / "x.db")
    assert isinstance(store, Storage)
    assert (await store._one(store._db, "PRAGMA journal_mode"))[0] == "wal"
    assert (await store._one(store._db, "PRAGMA foreign_keys"))[0] == 1
    assert (await store._one(store._db, "PRAGMA user_version"))[0] == len(MIGRATIONS)
    await store.close()


async def test_reopening_applies_only_missing_migrations(tmp_path):
    path = tmp_path / "m.db"
    await (await open_storage(path)).close()
    extra = (*MIGRATIONS, ("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)",))
    store = await open_storage(path, migrations=extra)
    assert (await store._one(store._db, "PRAGMA user_version"))[0] == len(extra)
    await store.close()
    await (await open_storage(path, migrations=extra)).close()  # nothing left to apply
    with pytest.raises(StorageError, match="newer than this program"):
        await open_storage(path)  # the old program meets a newer file


async def test_a_failing_migration_leaves_the_version_alone(tmp_path):
    path = tmp_path / "f.db"
    await (await open_storage(path)).close()
    broken = (*MIGRATIONS, ("CREATE TABLE ok (id INTEGER)", "THIS IS NOT SQL"))
    with pytest.raises(Exception, match="syntax"):
        await open_storage(path, migrations=broken)
    store = await open_storage(path)
    assert (await store._one(store._db, "PRAGMA user_version"))[0] == len(MIGRATIONS)
    await store.close()


async def test_chat_defaults_and_settings(store):
    chat = await store.get_chat(CHAT)
    assert (chat.language, chat.timezone, chat.base_stake, chat.summary_time) == (
        "zh",
        "Asia/Shanghai",
        1,
        "23:59",
    )
    chat = await store.update_chat(CHAT, language="en", timezone="Europe/Berlin", rules={"cap": 4}, summary_time="7:30")
    assert (chat.language, chat.timezone, chat.rules, chat.summary_time) == (
        "en",
        "Europe/Berlin",
        {"cap": 4},
        "07:30",
    )
    assert await store.get_chat(CHAT) == chat


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"summary_time": "25:00"}, "HH:MM"),
        ({"base_stake": 0}, "positive whole number"),
        ({"colour": "red"}, "unknown chat setting"),
        ({"summary_topic_id": 0}, "forum topic"),
        ({"summary_topic_id": "7"}, "forum topic"),
    ],
)
async def test_bad_chat_settings_are_refused_clearly(store, changes, message):
    with pytest.raises(StorageError, match=message):
        await store.update_chat(CHAT, **changes)


async def test_users_and_players(store):
    await store.save_user(7, "Li", language="zh")
    assert (await store.get_user(7)).started_dm is False
    user = await store.save_user(7, started_dm=True)
    assert (user.display_name, user.language, user.started_dm) == ("Li", "zh", True)
    first = await store.player_for_user(CHAT, 7, "Li")
    again = await store.player_for_user(CHAT, 7, "Li Wei")
    assert first.id == again.id and again.name == "Li Wei"
    elsewhere = await store.player_for_user(-2002, 7, "Li")
    assert elsewhere.id != first.id  # players are per chat
    guest = await store.named_player(CHAT, "  老王 ")
    assert guest == await store.named_player(CHAT, "老王") and guest.kind is PlayerKind.GUEST
    assert [p.id for p in await store.players(CHAT)] == [first.id, guest.id]
    with pytest.raises(InvalidWrite):
        await store.named_player(CHAT, "   ")
    with pytest.raises(NotFound):
        await store.get_player(999)


async def test_table_seats_and_messages(store):
    table, players = await seated_table(store)
    assert table.status is TableStatus.LOBBY and table.seats == tuple(p.id for p in players)
    with pytest.raises(InvalidWrite, match="already sits"):
        await store.set_seat(table.id, 0, players[1].id)
    other_chat = await store.player_for_user(-2002, 555, "X")
    with pytest.raises(InvalidWrite, match="another chat"):
        await store.set_seat(table.id, 0, other_chat.id)
    table = await store.set_table_message(table.id, 42)
    table = await store.set_table_message(table.id, 77, seat=2)
    assert table.message_id == 42 and table.dm_message_ids == (None, None, 77, None)
    assert [t.id for t in await store.open_tables(CHAT)] == [table.id]


async def test_tables_sessions_and_the_summary_keep_their_forum_topic(store):
    """A forum group's table, session and daily summary post in the topic they were opened in."""
    assert (await store.create_table(CHAT, None)).topic_id is None
    table = await store.create_table(CHAT, None, topic_id=12)
    assert (await store.get_table(table.id)).topic_id == 12
    players = [await store.named_player(CHAT, name) for name in ("A", "B")]
    session = await store.start_session(CHAT, [p.id for p in players], None, topic_id=34)
    assert (await store.get_session(session.id)).topic_id == 34
    assert (await store.update_chat(CHAT, summary_topic_id=56)).summary_topic_id == 56
    assert (await store.update_chat(CHAT, summary_topic_id=None)).summary_topic_id is None
    for bad in (0, -3, True, 1.5):
        with pytest.raises(InvalidWrite, match="forum topic"):
            await store.create_table(CHAT, None, topic_id=bad)
        with pytest.raises(InvalidWrite, match="forum topic"):
            await store.start_session(CHAT, [p.id for p in players], None, topic_id=bad)


async def test_a_hand_needs_four_seats(store):
    table = await store.create_table(CHAT, None)
    with pytest.raises(InvalidWrite, match="empty seat"):
        await store.start_hand(table.id, {}, seed=1, dealer=0)


async def test_actions_and_transfers_are_logged_together(store):
    table, players = await seated_table(store)
    hand = await store.start_hand(table.id, {"preset": "chengdu"}, seed=99, dealer=1)
    assert (hand.number, hand.status, hand.seats) == (1, HandStatus.PLAYING, table.seats)
    assert (await store.get_table(table.id)).status is TableStatus.PLAYING

    assert (await store.append_action(hand.id, 0, {"type": "discard", "tile": 4})).outcome is AppendOutcome.WRITTEN
    kong = [SeatTransfer(0, 2, 2, "kong"), SeatTransfer(1, 2, 2, "kong"), SeatTransfer(3, 2, 2, "kong")]
    assert not (await store.append_action(hand.id, 1, {"type": "kong", "tile": 4}, kong)).duplicate
    assert await store.balance(CHAT, players[2].id) == 6
    assert await store.balance(CHAT, players[3].id) == -2  # the computer player is a ledger party too

    # A retried update is a detected no-op, whatever transfers it carries.
    again = await store.append_action(hand.id, 1, {"tile": 4, "type": "kong"}, kong)
    assert again.duplicate and await store.balance(CHAT, players[2].id) == 6
    with pytest.raises(SequenceConflict, match="different action"):
        await store.append_action(hand.id, 1, {"type": "pung", "tile": 4})
    with pytest.raises(SequenceConflict, match="expects action number 2"):
        await store.append_action(hand.id, 5, {"type": "discard", "tile": 1})

    win = [SeatTransfer(1, 0, 8, "win")]
    await store.append_action(hand.id, 2, {"type": "win"}, win, result={"winners": [0]})
    hand = await store.get_hand(hand.id)
    assert hand.status is HandStatus.FINISHED and hand.result == {"winners": [0]}
    with pytest.raises(HandClosed):
        await store.append_action(hand.id, 3, {"type": "discard", "tile": 1})
    assert (await store.append_action(hand.id, 2, {"type": "win"}, win)).duplicate  # retried final action
    assert [a.seq for a in await store.hand_actions(hand.id)] == [0, 1, 2]
    assert {line.name: line.net for line in await store.balances(CHAT)} == {
        "A": 6,
        "B": -10,
        "C": 6,
        "电脑": -2,
    }
    assert await store.unfinished_hands() == []


async def test_a_failing_write_books_nothing(store):
    table, _ = await seated_table(store)
    hand = await store.start_hand(table.id, {}, seed=1, dealer=0)
    bad = [SeatTransfer(0, 1, 5, "ok"), SeatTransfer(2, 7, 5, "no such seat")]
    with pytest.raises(InvalidWrite, match="seat 7"):
        await store.append_action(hand.id, 0, {"type": "x"}, bad)
    with pytest.raises(InvalidWrite, match="whole number"):
        await store.append_action(hand.id, 0, {"type": "x"}, [SeatTransfer(0, 1, -3, "negative")])
    with pytest.raises(InvalidWrite, match="JSON"):
        await store.append_action(hand.id, 0, {"type": object()})
    assert await store.hand_actions(hand.id) == [] and await store.balances(CHAT) == []
    assert (await store.append_action(hand.id, 0, {"type": "x"})).outcome is AppendOutcome.WRITTEN


async def test_unfinished_hands_come_back_with_their_logs(store):
    table, _ = await seated_table(store)
    hand = await store.start_hand(table.id, {"mode": "bloody"}, seed=5, dealer=3)
    for seq in range(3):
        await store.append_action(hand.id, seq, {"n": seq}, [SeatTransfer(seq, 3, 1, "t")])
    (unfinished,) = await store.unfinished_hands()
    assert unfinished.hand == hand and unfinished.table.id == table.id
    assert [a.action for a in unfinished.actions] == [{"n": 0}, {"n": 1}, {"n": 2}]


async def test_voiding_a_hand_restores_every_chip(store):
    table, _ = await seated_table(store)
    hand = await store.start_hand(table.id, {}, seed=5, dealer=0)
    await store.append_action(hand.id, 0, {"a": 1}, [SeatTransfer(0, 1, 4, "kong"), SeatTransfer(2, 1, 4, "kong")])
    voided = await store.void_hand(hand.id, "table cancelled")
    assert voided.status is HandStatus.VOIDED and voided.result == {"voided": "table cancelled"}
    assert all(line.net == 0 for line in await store.balances(CHAT))
    assert len(await store.ledger(CHAT)) == 4  # nothing deleted: two rows and their reversals
    with pytest.raises(HandClosed):
        await store.void_hand(hand.id, "twice")
    second = await store.start_hand(table.id, {}, seed=6, dealer=1)
    assert second.number == 2


async def test_scorekeeping_records_and_undo(store, clock):
    me = await store.player_for_user(CHAT, 1, "Me")
    wang, zhang, li = [await store.named_player(CHAT, n) for n in ("Wang", "Zhang", "Li")]
    session = await store.start_session(CHAT, [me.id, wang.id, zhang.id, li.id], creator_id=1)
    await store.add_record(session.id, {"win": "discard", "winner": 0, "from": 1}, [SeatTransfer(1, 0, 4, "win")])
    clock.advance(minutes=3)
    await store.add_record(
        session.id, {"kong": "concealed", "by": 2}, [SeatTransfer(s, 2, 2, "kong") for s in (0, 1, 3)]
    )
    undo = await store.undo_last_record(session.id)
    assert undo.undoes is not None and undo.record == {"undo": 1}
    assert {line.name: line.net for line in await store.balances(CHAT)} == {
        "Me": 4,
        "Wang": -4,
        "Zhang": 0,
        "Li": 0,
    }
    assert [(line.name, line.net) for line in await store.session_totals(session.id)] == [
        ("Me", 4),
        ("Li", 0),
        ("Zhang", 0),
        ("Wang", -4),
    ]
    await store.undo_last_record(session.id)
    assert all(line.net == 0 for line in await store.balances(CHAT))
    assert await store.undo_last_record(session.id) is None
    records = await store.session_records(session.id)
    assert [(r.seq, r.undoes is not None, r.undone_by is not None) for r in records] == [
        (0, False, True),
        (1, False, True),
        (2, True, False),
        (3, True, False),
    ]
    ended = await store.end_session(session.id)
    assert ended.ended_at is not None and await store.open_sessions(CHAT) == []
    with pytest.raises(InvalidWrite, match="ended"):
        await store.add_record(session.id, {"win": 1}, [])
    with pytest.raises(InvalidWrite, match="2 to 4 different players"):
        await store.start_session(CHAT, [me.id, me.id], None)


async def test_recent_hands_mix_hosted_hands_and_records(store, clock):
    table, players = await seated_table(store)
    hand = await store.start_hand(table.id, {}, seed=1, dealer=0)
    await store.append_action(hand.id, 0, {"win": 1}, [SeatTransfer(1, 0, 3, "win")], result={"w": 0})
    clock.advance(hours=1)
    session = await store.start_session(CHAT, [players[0].id, players[1].id], None)
    record = await store.add_record(session.id, {"win": 2}, [SeatTransfer(0, 1, 5, "win")])
    history = await store.recent_hands(CHAT, players[0].id)
    assert [(h.kind, h.id, h.net) for h in history] == [("record", record.id, -5), ("hand", hand.id, 3)]
    assert history[1].result == {"w": 0}
    assert await store.recent_hands(CHAT, players[0].id, limit=1) == history[:1]


async def test_the_cache_check_catches_a_tampered_balance(store):
    table, players = await seated_table(store)
    hand = await store.start_hand(table.id, {}, seed=1, dealer=0)
    await store.append_action(hand.id, 0, {"a": 0}, [SeatTransfer(0, 1, 3, "t")])
    await store._db.execute("UPDATE balances SET balance = balance + 1 WHERE player_id = ?", (players[1].id,))
    (problem,) = await store.verify()
    assert "cached balance 4 but the ledger says 3" in problem
    await store._db.execute("UPDATE balances SET balance = balance - 1 WHERE player_id = ?", (players[1].id,))


async def test_many_tables_write_at_once_from_one_event_loop(store):
    hands = []
    for t in range(40):
        table, _ = await seated_table(store, names=(f"A{t}", f"B{t}", f"C{t}"), first_user=1000 + 3 * t)
        hands.append(await store.start_hand(table.id, {}, seed=t, dealer=0))

    async def play(hand_id: int) -> None:
        for seq in range(15):
            await store.append_action(hand_id, seq, {"s": seq}, [SeatTransfer(seq % 4, (seq + 1) % 4, 1, "t")])
            await asyncio.sleep(0)

    await asyncio.gather(*(play(h.id) for h in hands))
    assert [len(await store.hand_actions(h.id)) for h in hands] == [15] * 40
    assert sum(line.net for line in await store.balances(CHAT)) == 0


async def test_two_connections_share_the_file_without_locking_errors(db_url):
    """A second connection (e.g. ``xuezhan export`` while the bot runs) waits instead of failing."""
    first, second = await open_storage(db_url), await open_storage(db_url)
    try:
        hands = []
        for first_user, names in ((10, ("A", "B", "C")), (20, ("D", "E", "F"))):
            table, _ = await seated_table(first, names=names, first_user=first_user)
            hands.append(await first.start_hand(table.id, {}, seed=1, dealer=0))

        async def play(store, hand_id: int) -> None:
            for seq in range(30):
                await store.append_action(hand_id, seq, {"s": seq}, [SeatTransfer(0, 1, 1, "t")])

        await asyncio.gather(play(first, hands[0].id), play(second, hands[1].id))
        assert [len(await second.hand_actions(h.id)) for h in hands] == [30, 30]
        assert await first.verify() == []
    finally:
        await first.close()
        await second.close()


async def test_a_failing_write_in_a_shared_commit_fails_alone(store):
    hands = []
    for t in range(6):
        table, _ = await seated_table(store, names=(f"A{t}", f"B{t}", f"C{t}"), first_user=2000 + 3 * t)
        hands.append(await store.start_hand(table.id, {}, seed=t, dealer=0))
    writes = [
        store.append_action(h.id, 0, {"s": 0}, [SeatTransfer(0, 9 if i == 3 else 1, 5, "t")])
        for i, h in enumerate(hands)
    ]
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert isinstance(outcomes[3], InvalidWrite)
    assert all(not isinstance(o, Exception) for i, o in enumerate(outcomes) if i != 3)
    assert [len(await store.hand_actions(h.id)) for h in hands] == [1, 1, 1, 0, 1, 1]


async def test_callers_cancelled_while_waiting_do_not_stall_the_writer(store):
    table, _ = await seated_table(store)
    hand = await store.start_hand(table.id, {}, seed=1, dealer=0)
    tasks = [asyncio.create_task(store.get_chat(CHAT)) for _ in range(20)]
    await asyncio.sleep(0)
    for task in tasks[::2]:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert (await store.append_action(hand.id, 0, {"s": 0})).outcome is AppendOutcome.WRITTEN


async def test_a_transaction_that_cannot_start_fails_its_caller_instead_of_hanging(tmp_path):
    store = await open_storage(tmp_path / "gone.db")
    await store._db.close()  # the connection is gone: BEGIN itself fails
    with pytest.raises(StorageError, match="not committed: no active connection"):
        await asyncio.wait_for(store.get_chat(CHAT), timeout=5)
