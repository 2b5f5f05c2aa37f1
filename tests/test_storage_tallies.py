"""Tallies, leaderboards, daily summaries and the CSV export, checked against independent sums."""

from __future__ import annotations

import asyncio
import csv
import io
import random
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from test_storage import Clock

from cli.main import main
from storage import SeatTransfer, open_storage
from storage.export import HEADER

pytestmark = pytest.mark.both_backends

SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 1, 0, 0, tzinfo=UTC))


@pytest.fixture
async def store(db_url, clock):
    opened = await open_storage(db_url, clock=clock, synchronous="NORMAL")
    yield opened
    assert await opened.verify() == []
    await opened.close()


async def session_of(store, chat_id: int, names=("A", "B", "C", "D")):
    players = [await store.named_player(chat_id, name) for name in names]
    return await store.start_session(chat_id, [p.id for p in players], None), players


async def book_at(store, clock, session, when: datetime, payer: int, payee: int, amount: int) -> None:
    clock.now = when
    await store.add_record(session.id, {"at": when.isoformat()}, [SeatTransfer(payer, payee, amount, "win")])


def nets(lines) -> dict[str, int]:
    return {line.name: line.net for line in lines if line.net}


async def test_a_day_runs_from_local_midnight_to_local_midnight(store, clock):
    session, _ = await session_of(store, -1)
    await book_at(store, clock, session, datetime(2026, 3, 1, 23, 30, tzinfo=SHANGHAI), 0, 1, 5)
    await book_at(store, clock, session, datetime(2026, 3, 2, 0, 30, tzinfo=SHANGHAI), 2, 3, 7)
    first = await store.daily_tally(-1, date(2026, 3, 1))
    assert nets(first.lines) == {"B": 5, "A": -5} and first.transfers == 1 and first.played
    assert [line.name for line in first.lines] == ["B", "A"]  # best first
    assert nets((await store.daily_tally(-1, date(2026, 3, 2))).lines) == {"D": 7, "C": -7}
    assert not (await store.daily_tally(-1, date(2026, 3, 3))).played
    both = await store.range_tally(-1, date(2026, 3, 1), date(2026, 3, 2))
    assert nets(both.lines) == {"A": -5, "B": 5, "C": -7, "D": 7} and both.transfers == 2


async def test_a_23_hour_day_in_a_daylight_saving_zone(store, clock):
    await store.update_chat(-2, timezone="America/New_York")
    session, _ = await session_of(store, -2)
    # 2026-03-08: clocks jump from 02:00 to 03:00 in New York.
    await book_at(store, clock, session, datetime(2026, 3, 8, 0, 30, tzinfo=NEW_YORK), 0, 1, 1)
    await book_at(store, clock, session, datetime(2026, 3, 8, 23, 30, tzinfo=NEW_YORK), 0, 1, 2)
    await book_at(store, clock, session, datetime(2026, 3, 9, 0, 10, tzinfo=NEW_YORK), 0, 1, 4)
    await book_at(store, clock, session, datetime(2026, 3, 7, 23, 59, tzinfo=NEW_YORK), 0, 1, 8)
    tallies = await store.daily_tallies(-2, date(2026, 3, 7), date(2026, 3, 9))
    assert [nets(t.lines).get("B") for t in tallies] == [8, 3, 4]
    assert [t.day for t in tallies] == [date(2026, 3, 7), date(2026, 3, 8), date(2026, 3, 9)]


async def test_tallies_balances_and_leaderboards_match_independent_sums(store, clock):
    """Random books over two months in two chats; every query against sums kept on the side."""
    rng = random.Random(20260301)
    chats = {-10: "Asia/Shanghai", -20: "Europe/Berlin"}
    sessions = {}
    for chat_id, zone in chats.items():
        await store.update_chat(chat_id, timezone=zone)
        sessions[chat_id], _ = await session_of(store, chat_id, ("W", "X", "Y", "Z"))
    expected_day: dict[tuple[int, date], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    expected_all: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    start = datetime(2026, 2, 1, tzinfo=UTC)
    moments = sorted(start + timedelta(seconds=rng.randrange(60 * 86400)) for _ in range(300))
    names = "WXYZ"
    for when in moments:
        chat_id = rng.choice(list(chats))
        payer, payee = rng.sample(range(4), 2)
        amount = rng.randint(1, 64)
        await book_at(store, clock, sessions[chat_id], when, payer, payee, amount)
        local_day = when.astimezone(ZoneInfo(chats[chat_id])).date()
        for bucket in (expected_day[(chat_id, local_day)], expected_all[chat_id]):
            bucket[names[payer]] -= amount
            bucket[names[payee]] += amount

    def nonzero(d):
        return {k: v for k, v in d.items() if v}

    first, last = date(2026, 1, 31), date(2026, 4, 2)
    for chat_id in chats:
        tallies = await store.daily_tallies(chat_id, first, last)
        assert len(tallies) == (last - first).days + 1
        for tally in tallies:
            assert nets(tally.lines) == nonzero(expected_day[(chat_id, tally.day)])
            assert sum(line.net for line in tally.lines) == 0
        some_day = date(2026, 2, 14)
        assert nets((await store.daily_tally(chat_id, some_day)).lines) == nonzero(
            expected_day[(chat_id, some_day)]
        )
        assert nets(await store.balances(chat_id)) == nonzero(expected_all[chat_id])
        march: dict[str, int] = defaultdict(int)
        for (c, d), bucket in expected_day.items():
            if c == chat_id and d >= date(2026, 3, 1):
                for name, value in bucket.items():
                    march[name] += value
        board = await store.leaderboard(chat_id, since=date(2026, 3, 1), limit=4)
        assert nets(board) == nonzero(march)
        assert [line.net for line in board] == sorted((line.net for line in board), reverse=True)
        assert (await store.leaderboard(chat_id, limit=2)) == (await store.balances(chat_id))[:2]


async def test_daily_summaries_are_due_once_after_their_time_in_each_zone(store, clock):
    await store.update_chat(-1, summary_time="23:59")  # Shanghai
    await store.update_chat(-2, timezone="Europe/Berlin", summary_time="22:00")
    await store.get_chat(-3)  # a chat that never played
    for chat_id in (-1, -2):
        session, _ = await session_of(store, chat_id)
        await book_at(store, clock, session, datetime(2026, 3, 5, 12, 0, tzinfo=UTC), 0, 1, 3)

    async def due(at: datetime):
        return [(d.chat.id, d.day) for d in await store.chats_due_summary(at)]

    # 2026-03-05 12:00 UTC is 20:00 in Shanghai and 13:00 in Berlin: nothing due yet today.
    assert await due(datetime(2026, 3, 5, 12, 30, tzinfo=UTC)) == []
    assert await due(datetime(2026, 3, 5, 15, 59, tzinfo=UTC)) == [(-1, date(2026, 3, 5))]  # 23:59 Shanghai
    await store.mark_summary_posted(-1, date(2026, 3, 5))
    assert await due(datetime(2026, 3, 5, 16, 0, tzinfo=UTC)) == []
    # The bot was down at 22:00 Berlin; at 09:00 next morning the missed summary is due, once.
    assert await due(datetime(2026, 3, 6, 8, 0, tzinfo=UTC)) == [(-2, date(2026, 3, 5))]
    await store.mark_summary_posted(-2, date(2026, 3, 5))
    await store.mark_summary_posted(-2, date(2026, 3, 4))  # an older day never moves the mark back
    assert (await store.get_chat(-2)).last_summary_date == date(2026, 3, 5)
    assert await due(datetime(2026, 3, 6, 23, 0, tzinfo=UTC)) == []  # nobody played on the 6th


async def test_next_summary_time_follows_the_chat_zone():
    from storage.days import next_summary_at

    now = datetime(2026, 3, 5, 16, 0, tzinfo=UTC)  # 00:00 on the 6th in Shanghai
    assert next_summary_at(now, SHANGHAI, time(23, 59)) == datetime(2026, 3, 6, 23, 59, tzinfo=SHANGHAI)
    assert next_summary_at(now, NEW_YORK, time(23, 59)) == datetime(2026, 3, 5, 23, 59, tzinfo=NEW_YORK)


def test_export_writes_the_chat_ledger_as_csv(tmp_path, clock, capsys):
    path = tmp_path / "e.db"

    async def prepare() -> None:
        store = await open_storage(path, clock=clock)
        session, _ = await session_of(store, -7, ("老王", "B", "C", "D"))
        clock.now = datetime(2026, 3, 1, 16, 30, tzinfo=UTC)
        await store.add_record(session.id, {"win": 1}, [SeatTransfer(1, 0, 12, "自摸")])
        await store.undo_last_record(session.id)
        await store.close()

    asyncio.run(prepare())

    assert main(["export", "--chat", "-7", "--db", str(path)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert tuple(rows[0]) == HEADER and len(rows) == 3
    first = dict(zip(HEADER, rows[1], strict=True))
    assert (first["payer"], first["payee"], first["amount"], first["reason"]) == ("B", "老王", "12", "自摸")
    assert first["time_local"] == "2026-03-02T00:30:00+08:00"
    assert rows[2][HEADER.index("reason")] == "undo: 自摸"

    out = tmp_path / "ledger.csv"
    assert main(["export", "--chat", "-7", "--db", str(path), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").count("\n") == 3


def test_export_without_a_database_says_so(tmp_path, capsys):
    assert main(["export", "--chat", "1", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no database file" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not a database, whatever its name" * 100)
    assert main(["export", "--chat", "1", "--db", str(notes)]) == 2
    assert "is not a usable SQLite database" in capsys.readouterr().err
