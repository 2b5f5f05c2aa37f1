"""Your phone buzzes on your turn, and swap three shows what happened (issue 13, items 2 and 6).

Telegram does not notify on edits, so a decision still open a few seconds after it opened sends a
short new message (deleted once the decision is made; none for someone who decides at once), a
reminder comes once before the timer runs out, the group mentions a person whose turn waits that
long, and a person whose time ran out is told what the computer did.
"""

from __future__ import annotations

import asyncio

import pytest
from fake_telegram import ChatMessage, FakeTelegram, FakeUser
from harness import BotFactory
from table_players import HumanPlayer, alone_at_a_table, choose, game_buttons, hand_message

from bot.table import presenter

FAST = {"XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_GROUP_UPDATE_SECONDS": "1", "XUEZHAN_LANG": "en"}


async def swap_three(telegram: FakeTelegram, user: FakeUser) -> None:
    """Pick three tiles of one suit, then press "pass these three" once it shows."""
    player = HumanPlayer(telegram, user)
    await player.act()  # the three picks
    await telegram.wait_for(lambda: any(code == "sc" for _, code in game_buttons(hand_message(telegram, user))),
                            timeout=10, what="the confirm button")
    await player.act()


def texts_in(telegram: FakeTelegram, user: FakeUser, *, deleted: bool = True) -> list[ChatMessage]:
    """The bot's text messages in the user's DM since the hand picture (the welcome is older)."""
    found = telegram.all_bot_messages(user) if deleted else telegram.bot_messages(user)
    first = next((m.message_id for m in found if m.photo_file_id is not None), None)
    return [m for m in found if first is not None and m.message_id > first and m.text]


async def test_a_decision_pings_with_a_new_message_that_goes_once_it_is_made(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice, _ = await alone_at_a_table(telegram)
    # The swap opens: besides the (edited) hand picture, a new message that notifies.
    ping = await telegram.wait_for(
        lambda: next((m for m in texts_in(telegram, alice, deleted=False) if "three tiles" in m.text), None),
        timeout=10, what="the swap ping")
    assert "seconds to decide" in ping.text
    await telegram.wait_for(lambda: game_buttons(hand_message(telegram, alice)), timeout=10, what="the buttons")
    await swap_three(telegram, alice)
    await telegram.wait_for(lambda: ping.deleted, timeout=10, what="the swap ping to be deleted")
    # The next decision (the void) pings anew; the DM keeps one ping at a time.
    void = await telegram.wait_for(
        lambda: next((m for m in texts_in(telegram, alice, deleted=False) if "void" in m.text), None),
        timeout=10, what="the void ping")
    assert [m.message_id for m in texts_in(telegram, alice, deleted=False)] == [void.message_id]


@pytest.mark.both_backends
async def test_with_the_web_table_on_a_decision_still_pings(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """Found by a driver of life events on PostgreSQL with the web table on: there a ping comes due
    as a database timer, which asked the wrapped presenter (the views' ``Fanout``) to send it, and
    failed every 15 s: nobody's phone buzzed."""
    await start_bot(**FAST, XUEZHAN_WEBAPP_URL="https://table.example", XUEZHAN_WEB_PORT="0")
    alice, _ = await alone_at_a_table(telegram)
    ping = await telegram.wait_for(
        lambda: next((m for m in texts_in(telegram, alice, deleted=False) if "three tiles" in m.text), None),
        timeout=10, what="the swap ping")
    assert "seconds to decide" in ping.text


async def test_a_person_who_decides_at_once_gets_no_ping(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch
) -> None:
    # Grace as long as the 30 s timers allow (10 s), so that a loaded machine stays within it.
    monkeypatch.setattr(presenter, "PING_GRACE", 60.0)
    await start_bot(**FAST)
    alice, _ = await alone_at_a_table(telegram)

    def offered(prefix: str) -> bool:
        shown = hand_message(telegram, alice)
        return shown is not None and any(code.startswith(prefix) for _, code in game_buttons(shown))

    await telegram.wait_for(lambda: offered("t"), timeout=10, what="the swap")
    await swap_three(telegram, alice)  # at once
    await telegram.wait_for(lambda: offered("v"), timeout=10, what="the void decision")
    assert await HumanPlayer(telegram, alice).act()  # the void, at once; returns once the DM changed
    assert not offered("v")
    assert texts_in(telegram, alice) == []  # no ping, not even one sent and deleted


async def test_picks_show_the_person_is_there_so_the_ping_waits(
    telegram: FakeTelegram, start_bot: BotFactory, monkeypatch
) -> None:
    # The swap's three picks, 5 s apart, take longer than the grace (8 s) in all; each pick starts it again.
    monkeypatch.setattr(presenter, "PING_GRACE", 8.0)
    await start_bot(**FAST, XUEZHAN_DISCARD_SECONDS="60")
    alice, _ = await alone_at_a_table(telegram)
    await telegram.wait_for(lambda: (m := hand_message(telegram, alice)) is not None and game_buttons(m),
                            timeout=10, what="the swap")
    message = hand_message(telegram, alice)
    for i, button in enumerate(choose(game_buttons(message))):
        if i:
            await asyncio.sleep(5)
        await (await alice.press(message, data=button.callback_data)).answer()
    await telegram.wait_for(lambda: any(code == "sc" for _, code in game_buttons(hand_message(telegram, alice))),
                            timeout=10, what="the confirm button")
    assert await HumanPlayer(telegram, alice).act()  # "pass these three"
    assert texts_in(telegram, alice) == []


async def test_a_reminder_once_a_group_mention_and_what_the_computer_did(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST, XUEZHAN_DISCARD_SECONDS="4", XUEZHAN_CLAIM_SECONDS="4")
    alice, group = await alone_at_a_table(telegram)
    # Alice does nothing. Two seconds before the swap's timer runs out: one reminder by DM ...
    reminder = await telegram.wait_for(
        lambda: next((m for m in texts_in(telegram, alice) if "seconds left" in m.text), None),
        timeout=10, what="the reminder")
    assert reminder.text == "2 seconds left."
    # ... and a mention in the group that notifies her.
    mention = await telegram.wait_for_bot_message(group, lambda m: "your turn" in (m.text or ""), timeout=10)
    assert mention.text.startswith("Alice, it is your turn")
    assert f"tg://user?id={alice.id}" in (mention.formatting or "")
    # Time runs out: the computer swaps for her, and her DM says what it passed on.
    notice = await telegram.wait_for(
        lambda: next((m for m in texts_in(telegram, alice) if "computer played for you" in m.text), None),
        timeout=10, what="what the computer did")
    assert "passed on" in notice.text
    reminders = [m for m in texts_in(telegram, alice) if "seconds left" in m.text and m.message_id < notice.message_id]
    assert len(reminders) == 1  # once per decision
    # The decision is made: the reminder and the group mention are gone.
    await telegram.wait_for(lambda: reminder.deleted and mention.deleted, timeout=10, what="the pings to go")


async def test_swap_three_shows_who_has_chosen_the_direction_and_the_tiles_received(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)

    def table_caption() -> str:
        photos = [m for m in telegram.bot_messages(group) if m.photo_file_id is not None]
        return photos[0].caption or "" if photos else ""

    # The computers chose at once; the group sees that, and that Alice is still choosing.
    await telegram.wait_for(lambda: "Chosen: AI-1, AI-2, AI-3\nStill choosing: Alice" in table_caption(),
                            timeout=10, what="who has chosen and who is still choosing, in the group")
    await telegram.wait_for(lambda: game_buttons(hand_message(telegram, alice)), timeout=10, what="the buttons")
    await swap_three(telegram, alice)
    # While voids are chosen, the direction stays in view and Alice's DM names what she received.
    dm = await telegram.wait_for(
        lambda: (m := hand_message(telegram, alice)) and "You received" in (m.caption or "") and m,
        timeout=10, what="the tiles received")
    assert "Tiles passed" in dm.caption
    received = dm.caption.split("You received ")[1].split(".")[0].split()
    assert len(received) == 3
    await telegram.wait_for(lambda: "Tiles passed" in table_caption(), timeout=10, what="the direction in the group")
