"""A table recovers from real faults: a database locked by another process, a full disk, a card
lost to a crash or to a storm of 429s, and a group that becomes a supergroup.

The faults are real where they can be: another process holds SQLite's write lock longer than
the bot's busy timeout, and the database lives on a small tmpfs that is filled to the last byte
(mounting needs root; the test says so and skips otherwise). The table must go on by itself
once the fault ends, with the books intact.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from table_players import HumanPlayer, alone_at_a_table, game_buttons, hand_message, play_until_over

from bot.services import services

FAST = {"XUEZHAN_COMPUTER_DELAY": "0.05", "XUEZHAN_GROUP_UPDATE_SECONDS": "3", "XUEZHAN_LANG": "en",
        "XUEZHAN_DISCARD_SECONDS": "1", "XUEZHAN_CLAIM_SECONDS": "1"}
# A fault made once Alice's seat is the computer's must come while the hand is still in play: at
# 0.05 s a move, a short hand (three quick wins) could end before a locker process has started
# on a loaded machine, and no write would ever meet the fault. At 0.2 s a move even a short hand
# leaves several seconds.
STILL_PLAYING = {**FAST, "XUEZHAN_COMPUTER_DELAY": "0.2"}
# Longer than the bot's 10 s busy timeout, by enough that the first write to wait for the lock
# (which starts up to a move's time after it is taken, more on a loaded machine) has failed, and
# said so, before the lock goes.
HOLD_SECONDS = 14.0
LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


def settlement(telegram: FakeTelegram, group: FakeChat):
    return next((m for m in reversed(telegram.bot_messages(group))
                 if any((b.callback_data or "").endswith(":next") for b in m.buttons)), None)


async def hand_of(app, group: FakeChat):
    """The table's current hand, once it has been dealt."""
    storage = services(app).storage
    for _ in range(100):
        tables = await storage.open_tables(group.id)
        hands = await storage.table_hands(tables[0].id) if tables else []
        if hands:
            return hands[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("no hand was dealt")


async def logged_actions(app, group: FakeChat) -> int:
    return len(await services(app).storage.hand_actions((await hand_of(app, group)).id))


async def test_a_lock_held_by_another_process_past_the_busy_timeout_only_pauses_the_table(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**STILL_PLAYING)
    _, group = await alone_at_a_table(telegram)
    await telegram.wait_for_bot_message(group, lambda m: "ran out of time" in (m.text or ""), timeout=15)
    locker = await asyncio.create_subprocess_exec(
        sys.executable, "-c", LOCKER, str(start_bot.db), str(HOLD_SECONDS), stdout=subprocess.PIPE)
    assert locker.stdout is not None
    assert (await locker.stdout.readline()).strip() == b"locked"
    notice = await telegram.wait_for_bot_message(group, lambda m: "cannot save" in (m.text or ""), timeout=20)
    assert notice is not None
    assert await locker.wait() == 0
    await telegram.wait_for_bot_message(group, lambda m: "works again" in (m.text or ""), timeout=30)
    await telegram.wait_for(lambda: settlement(telegram, group), timeout=90, what="the settlement card")
    assert len([m for m in telegram.bot_messages(group) if "cannot save" in (m.text or "")]) == 1
    assert await services(app).storage.verify() == []


def mount_tmpfs(where: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root")
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def fill(where: Path) -> Path:
    """Write zeros until the file system is full; the filler file is returned for removal."""
    filler = where / f"filler-{uuid.uuid4().hex}"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return filler


async def her_turn(telegram: FakeTelegram, alice: FakeUser) -> tuple[ChatMessage, str]:
    """Alice plays (passing every claim, so she is never out) until it is her turn to discard:
    the table then writes nothing until she does. Her DM and the data of a discard button."""
    player = HumanPlayer(telegram, alice)
    for _ in range(1200):
        dm = hand_message(telegram, alice)
        buttons = game_buttons(dm) if dm is not None else []
        discard = next((b.callback_data for b, code in buttons if code.startswith("d")), None)
        if dm is not None and discard is not None:
            return dm, discard
        passing = next((b.callback_data for b, code in buttons if code.startswith("x")), None)
        if dm is not None and passing is not None:
            edits = dm.edit_count
            await (await alice.press(dm, data=passing)).answer()
            await telegram.wait_for(lambda m=dm, e=edits: m.edit_count > e or hand_message(telegram, alice) is not m,
                                    what="the pass taken")
        elif not await player.act():  # the swap and the void
            await asyncio.sleep(0.05)
    raise AssertionError("Alice's turn to discard never came")


def fill_behind_an_empty_wal(db: Path, disk: Path) -> Path:
    """Fill the disk while the write-ahead log is empty, so that any write must grow it; the filler.

    A log that keeps pages (a checkpoint that could not truncate it, or a write between the
    checkpoint and the filling) lets writes through once the background checkpoint has copied it
    back: the writer reuses those pages. So the log is truncated and checked empty after filling."""
    wal = Path(f"{db}-wal")
    for _ in range(50):
        with contextlib.closing(sqlite3.connect(db)) as conn:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        filler = fill(disk)
        if busy == 0 and (not wal.exists() or wal.stat().st_size == 0):
            return filler
        filler.unlink()
    raise AssertionError("the write-ahead log never stayed empty")


async def test_a_full_disk_pauses_the_table_and_it_goes_on_when_space_returns(
    telegram: FakeTelegram, start_bot: BotFactory, tmp_path: Path
) -> None:
    disk = tmp_path / "disk"
    mount_tmpfs(disk, "16m")
    try:
        start_bot.db = disk / "xuezhan.db"
        app = await start_bot(**{**FAST, "XUEZHAN_DISCARD_SECONDS": "120", "XUEZHAN_CLAIM_SECONDS": "120"})
        alice, group = await alone_at_a_table(telegram)
        dm, discard = await her_turn(telegram, alice)
        before = await logged_actions(app, group)
        filler = fill_behind_an_empty_wal(start_bot.db, disk)
        press = await alice.press(dm, data=discard)  # her move cannot be saved
        await telegram.wait_for_bot_message(group, lambda m: "cannot save" in (m.text or ""), timeout=30)
        assert await press.answer() is None  # answered while the move waits for the disk
        during = await logged_actions(app, group)
        await asyncio.sleep(2)
        assert await logged_actions(app, group) == during == before  # nothing gets through a full disk
        filler.unlink()
        await telegram.wait_for_bot_message(group, lambda m: "works again" in (m.text or ""), timeout=30)
        await play_until_over(telegram, group, [HumanPlayer(telegram, alice)], timeout=90)
        assert await logged_actions(app, group) > before
        assert await services(app).storage.verify() == []
        await start_bot.close()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


async def test_a_settlement_card_lost_before_a_crash_is_posted_after_the_restart(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    # No picture reaches Telegram during this hand: the state after the final commit is that
    # of a process killed right after it (the hand finished, its card never sent).
    telegram.fail_next("sendPhoto", 100_000, status=400, description="Bad Request: the process is gone")
    alice, group = await alone_at_a_table(telegram)
    storage = services(app).storage
    hand = await hand_of(app, group)
    for _ in range(1200):
        if (await storage.get_hand(hand.id)).status == "finished":
            break
        await asyncio.sleep(0.1)
    assert settlement(telegram, group) is None
    assert [p.key for p in await storage.owed_posts()] == [f"settlement:{hand.id}"]
    await start_bot.stop(app)
    telegram.clear_faults()

    app = await start_bot(**FAST)
    card = await telegram.wait_for(lambda: settlement(telegram, group), timeout=15, what="the owed card")
    await (await alice.press(card, "End")).answer()
    await telegram.wait_for_bot_message(group, lambda m: "is over after 1 hand." in (m.text or ""))
    storage = services(app).storage
    assert await storage.owed_posts() == []
    assert (await storage.get_table(hand.table_id)).status == "finished"
    assert await storage.verify() == []


async def test_a_group_that_becomes_a_supergroup_keeps_its_chips(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**{**FAST, "XUEZHAN_DISCARD_SECONDS": "30", "XUEZHAN_CLAIM_SECONDS": "30"})
    alice, group = await alone_at_a_table(telegram)
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    storage = services(app).storage
    # Who has a balance depends on the hand: a seat no chip touched has none (Alice may be one).
    before = {t.name: t.net for t in await storage.balances(group.id)}

    supergroup = telegram.migrate(group)
    # The table moved too: the card waiting for Next / End is posted again in the supergroup,
    # once the chat's rows have moved.
    moved = await telegram.wait_for(lambda: settlement(telegram, supergroup), timeout=15, what="the card moved")
    assert card.chat_id == group.id and moved.chat_id == supergroup.id
    assert {t.name: t.net for t in await storage.balances(supergroup.id)} == before
    assert await storage.balances(group.id) == []
    sent = await alice.send(supergroup, "/balance")
    answer = await telegram.wait_for_bot_message(supergroup, lambda m: "chips" in (m.text or ""), after=sent.message_id)
    assert answer.text == f"Alice: {before.get('Alice', 0):+d} chips in this chat."
    await (await alice.press(moved, "End")).answer()
    await telegram.wait_for_bot_message(supergroup, lambda m: "is over after 1 hand." in (m.text or ""))
    assert await storage.verify() == []


async def test_removed_mid_hand_the_bot_finishes_by_dm_closes_the_table_and_says_so_on_return(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**{**FAST, "XUEZHAN_DISCARD_SECONDS": "30", "XUEZHAN_CLAIM_SECONDS": "30"})
    alice, group = await alone_at_a_table(telegram)
    storage = services(app).storage
    hand = await hand_of(app, group)
    player = HumanPlayer(telegram, alice)
    for _ in range(3):
        while not await player.act():
            await asyncio.sleep(0.05)
    telegram.remove_bot(group, alice)
    for _ in range(1200):  # Alice goes on in her DM
        if (await storage.get_table(hand.table_id)).status == "finished":
            break
        if not await player.act():
            await asyncio.sleep(0.05)
    assert (await storage.get_hand(hand.id)).status == "finished"
    assert (await storage.get_table(hand.table_id)).status == "finished"
    assert await storage.owed_posts() == []
    # The group refused one post; the table asked it no more (it asked about six times a hand before).
    refused = [c for c in telegram.calls if c.params.get("chat_id") == group.id and c.status == 403]
    assert len(refused) == 1, [c.method for c in refused]

    telegram.add_bot(group, alice)
    notice = await telegram.wait_for_bot_message(group, lambda m: "While I was out" in (m.text or ""))
    assert f"table #{hand.table_id}" in notice.text
    await alice.send(group, "/newgame")  # the group is free for a new table
    await telegram.wait_for_bot_message(group, lambda m: f"table #{hand.table_id + 1}" in (m.text or ""))
    assert await storage.verify() == []


async def test_removed_twice_in_one_hand_the_table_closes_once_and_nothing_outlives_a_stop(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """Found by a driver of life events: removed, added back and removed again within one hand,
    the table got a second closing task in place of the first; the first, no longer cancelled at a
    stop, ran on into closed storage ("Task exception was never retrieved")."""
    app = await start_bot(**{**FAST, "XUEZHAN_DISCARD_SECONDS": "30", "XUEZHAN_CLAIM_SECONDS": "30"})
    alice, group = await alone_at_a_table(telegram)

    def closing() -> list[asyncio.Task]:
        return [t for t in asyncio.all_tasks() if "_close_when_over" in repr(t.get_coro()) and not t.done()]

    await hand_of(app, group)  # the hand is under way
    telegram.remove_bot(group, alice)
    await telegram.wait_for(closing, what="the table closing")
    telegram.add_bot(group, alice)
    await telegram.wait_for_bot_message(group, lambda m: "While I was out" in (m.text or ""))
    telegram.remove_bot(group, alice)
    await telegram.settle()
    assert len(closing()) == 1
    await start_bot.stop(app)
    assert closing() == []


async def test_removed_before_the_start_the_lobby_is_cancelled(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    await alice.send(group, "/newgame")
    await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]
    telegram.remove_bot(group, alice)
    for _ in range(100):
        if (await storage.get_table(table.id)).status == "voided":
            break
        await asyncio.sleep(0.05)
    assert (await storage.get_table(table.id)).status == "voided"


async def test_a_settlement_card_lost_to_a_storm_of_server_errors_is_posted_again(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    # Every picture fails with 502 (past the client's own retries) until the hand is over.
    telegram.fail_next("sendPhoto", 100_000, status=502)
    alice, group = await alone_at_a_table(telegram)
    storage = services(app).storage
    hand = await hand_of(app, group)
    for _ in range(1200):
        if (await storage.get_hand(hand.id)).status == "finished":
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    assert settlement(telegram, group) is None and await storage.owed_posts()
    telegram.clear_faults()  # Telegram recovers; no restart
    card = await telegram.wait_for(lambda: settlement(telegram, group), timeout=60, what="the card posted again")
    await asyncio.sleep(1)
    cards = [m for m in telegram.bot_messages(group) if any((b.callback_data or "").endswith(":next")
                                                           for b in m.buttons)]
    assert cards == [card]  # posted once, not once per retry
    await (await alice.press(card, "End")).answer()
    await telegram.wait_for_bot_message(group, lambda m: "is over after 1 hand" in (m.text or ""))
    assert await storage.owed_posts() == []


async def test_a_deleted_table_message_is_left_alone_and_the_hand_goes_on(
    telegram: FakeTelegram, start_bot: BotFactory, caplog
) -> None:
    """An admin tidying the chat deletes the table picture. The bot tried to edit it again at every
    change (each try a group send turn spent, and a warning), for the rest of the hand."""
    await start_bot(**{**FAST, "XUEZHAN_GROUP_UPDATE_SECONDS": "0.2"})
    alice, group = await alone_at_a_table(telegram)
    table = await telegram.wait_for_bot_message(group, lambda m: m.photo is not None)
    table.deleted = True
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    assert card.caption.startswith("Hand 1 settled")
    await telegram.settle()
    failed_edits = [c for c in telegram.calls if c.method.startswith("editMessage") and c.status != 200]
    assert len(failed_edits) <= 1
    assert not [r for r in caplog.records if "could not edit the table message" in r.getMessage()]


async def test_a_player_who_deletes_their_hand_message_gets_a_new_one_with_the_buttons(
    telegram: FakeTelegram, start_bot: BotFactory, caplog
) -> None:
    """People clear their chat with the bot. When only the buttons or the caption changed next (a
    claim offered, the time running out), the edit failed and the decision never reached them."""
    await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)
    player = HumanPlayer(telegram, alice)
    deleted = 0
    while deleted < 3:  # her picture is deleted as soon as it shows a decision, three times over
        message = await telegram.wait_for(lambda: (m := hand_message(telegram, alice)) and game_buttons(m) and m,
                                          timeout=30, what="a decision in her DM")
        message.deleted = True
        deleted += 1
        await telegram.wait_for(lambda m=message: hand_message(telegram, alice) not in (None, m),
                                timeout=15, what="a new hand message")
    card = await play_until_over(telegram, group, [player])
    assert card.caption.startswith("Hand 1 settled")
    assert not [r for r in caplog.records if "could not update the DM" in r.getMessage()]
