"""PostgreSQL restarted under load: two webhook workers behind ``xuezhan run``'s front keep every
table going, and the log and the ledger come out whole — no action lost, none applied twice.

Two workers share the tables (a person's presses go to the worker of their DM, the group's to the
group's), so the shared rate limits, the table locks and the hands taken up from the other
worker all go through the restart. This test once stalled a table now and then (docs/storage.md,
"A stall after a restart"): a connection the server had just dropped answered "another operation
is in progress", which the shared limiter let through and which killed a DM's update task.

Three tables (a person and three computers each) play behind the front; the server is restarted
twice, each time once every table has logged six actions since the last restart, so writes are
in flight at every table. After each restart every table must log six more within 30 s, with
decision deadlines far away so that no timer hands a stalled seat to the computer: the workers
reconnected (storage, table locks, timers). Then ``verify()`` is clean and every
hand's log is contiguous, replays through the referee, and the ledger holds exactly the chips the
referee books for each action: a write applied twice would book twice, a lost one leave a gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from crash_worker import _check_hand
from fake_telegram import FakeChat, FakeTelegram, FakeUser
from pg_server import PgServer, running_server
from table_players import HumanPlayer, hand_message, open_lobby, start_game
from test_run_workers import environment, free_port, run_workers, stop

from storage import Storage, StorageError, open_storage

TABLES = 3
WORKERS = 2
AGAIN_AFTER = 5.0  # seconds after which a person presses "Next hand" again if its card still offers it


@pytest.fixture
def own_server() -> Iterator[PgServer]:
    """A server of this test's own: restarting the session's would disturb other tests."""
    with running_server() as server:
        yield server


async def keep_playing(telegram: FakeTelegram, person: FakeUser, group: FakeChat, stop: asyncio.Event) -> None:
    """Decide whenever the DM asks, and press "Next hand" on each settlement card, until ``stop``.

    Like a person: a press the database restart swallowed ("Something went wrong; please try
    again", or its buttons still there a while later) is made again."""
    player, pressed, pressed_at = HumanPlayer(telegram, person), 0, 0.0
    while not stop.is_set():
        # While the database is away a press may be answered late, or its DM change late: look again.
        with contextlib.suppress(TimeoutError, AssertionError):
            if await player.act():
                continue
        card = next((m for m in reversed(telegram.bot_messages(group))
                     if (m.message_id > pressed or time.monotonic() - pressed_at > AGAIN_AFTER)
                     and any((b.callback_data or "").endswith(":next") for b in m.buttons)), None)
        if card is not None:
            pressed, pressed_at = card.message_id, time.monotonic()
            data = next(b.callback_data for b in card.buttons if (b.callback_data or "").endswith(":next"))
            with contextlib.suppress(TimeoutError, AssertionError):
                await (await person.press(card, data=data)).answer()
        await asyncio.sleep(0.05)


async def logged_everywhere(store: Storage, groups: list[FakeChat], at_least: int, since: float,
                            timeout: float = 30, shown: Callable[[], str] = str) -> None:
    """Until every group's table has logged ``at_least`` actions after ``since`` (a wall-clock time);
    ``shown()`` describes what the people see, for the failure's message."""
    deadline = time.monotonic() + timeout
    while True:
        counts = []
        with contextlib.suppress(StorageError):  # the server may still be starting
            for group in groups:
                count = 0
                for table in await store.open_tables(group.id):
                    for hand in await store.table_hands(table.id):
                        count += sum(a.at.timestamp() > since for a in await store.hand_actions(hand.id))
                counts.append(count)
        if len(counts) == len(groups) and min(counts) >= at_least:
            return
        assert time.monotonic() < deadline, f"tables stopped logging: {counts} actions since the restart; {shown()}"
        await asyncio.sleep(0.2)


async def test_tables_go_on_through_a_postgresql_restart_and_the_ledger_stays_whole(
    telegram: FakeTelegram, tmp_path: Path, own_server: PgServer
) -> None:
    url = await own_server.create_database()
    # Decision deadlines far away: a table that stalls must not be rescued by a timer handing its
    # seat to the computer; it has to go on because the worker reconnected.
    env = environment(telegram, url, free_port(), XUEZHAN_COMPUTER_DELAY="0.05",
                      XUEZHAN_GROUP_UPDATE_SECONDS="0.5", XUEZHAN_DISCARD_SECONDS="600",
                      XUEZHAN_CLAIM_SECONDS="600")
    process = await run_workers(tmp_path, env, WORKERS)
    stop_playing = asyncio.Event()
    groups: list[FakeChat] = []
    restarts: list[float] = []
    try:
        await telegram.wait_for(lambda: telegram.webhook_url != "", timeout=60, what="setWebhook")
        players, people = [], []
        for i in range(TABLES):
            person = telegram.user(f"Player{i}")
            people.append(person)
            group = telegram.group(f"Table {i}", members=[person], admins=[person])
            await person.start()
            await start_game(telegram, person, await open_lobby(telegram, person, group))
            groups.append(group)
            players.append(asyncio.create_task(keep_playing(telegram, person, group, stop_playing)))
        def shown() -> str:
            """Each person's newest DM: its caption and buttons."""
            return "; ".join(
                f"{m.caption!r} {[b.text for b in m.buttons]}" for m in (hand_message(telegram, p) for p in people)
                if m is not None)

        watcher = await open_storage(url)  # reconnects after each restart, like the workers
        try:
            for _ in range(2):
                # Each restart lands in play (past the swap of three), writes in flight at every table.
                await logged_everywhere(watcher, groups, at_least=6, since=restarts[-1] if restarts else 0.0,
                                        shown=shown)
                await asyncio.to_thread(own_server.restart)  # every connection drops, mid-write or not
                restarts.append(time.time())
            await logged_everywhere(watcher, groups, at_least=6, since=restarts[-1], shown=shown)
        finally:
            await watcher.close()
        stop_playing.set()
        await asyncio.gather(*players)
    finally:
        stop_playing.set()
        code, stderr = await stop(process)
        print(stderr)  # the workers' log, shown when the test fails
    assert code == 0, stderr[-3000:]

    store = await open_storage(url)
    try:
        assert await store.verify() == []
        for group in groups:
            rows = defaultdict(list)
            for entry in await store.ledger(group.id):
                rows[entry.hand_id].append(entry)
            for table in await store.open_tables(group.id):
                for hand in await store.table_hands(table.id):
                    logged = await store.hand_actions(hand.id)
                    _check_hand(hand, logged, rows.get(hand.id, []))  # contiguous, replays, booked once
    finally:
        await store.close()
