"""Calls whose answer was lost are retried safely (issue 11, item 9).

Telegram applied the first ``sendPhoto`` of a DM hand picture but the connection dropped before
the bot heard so; the retry posted the picture again. Only one hand picture with live buttons
may stay in the person's DM, and the game goes on from it. A retried answer to a press, or a
retried edit, that Telegram had already applied is a success, not an error.
"""

from __future__ import annotations

import logging

import pytest
from fake_telegram import FakeTelegram
from harness import BotFactory
from table_players import game_buttons, hand_message, open_lobby, start_game
from test_access_control import FAST


async def test_a_dm_photo_sent_twice_after_a_lost_answer_leaves_one_picture(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    await telegram.wait_for_bot_message(alice)  # the bot has written to Alice's DM before
    lobby = await open_lobby(telegram, alice, group)
    await (await alice.press(lobby, "Join")).answer()
    await telegram.wait_for(lambda: "Alice" in lobby.text, what="Alice seated")
    telegram.lose_next_response("sendPhoto", chat=alice)  # her first hand picture
    await start_game(telegram, alice, lobby)

    await telegram.wait_for(lambda: [c for c in telegram.calls if c.method == "sendPhoto" and c.status == 0],
                            what="the lost answer")
    sent = await telegram.wait_for(
        lambda: [m for m in telegram.all_bot_messages(alice) if m.photo_file_id is not None and m.deleted],
        timeout=10, what="the duplicate picture deleted")
    lost = [c for c in telegram.calls if c.method == "sendPhoto" and c.status == 0]
    assert len(lost) == 1 and len(sent) == 1
    pictures = [m for m in telegram.bot_messages(alice) if m.photo_file_id is not None]
    assert len(pictures) == 1, [m.caption for m in pictures]  # one hand picture, not two
    assert pictures[0].message_id > sent[0].message_id  # the retry's is the one kept

    # The game goes on from the kept picture: her buttons there are live.
    dm = await telegram.wait_for(lambda: (m := hand_message(telegram, alice)) and game_buttons(m) and m,
                                 timeout=15, what="Alice's buttons")
    assert dm.message_id == pictures[0].message_id
    button, _ = game_buttons(dm)[0]
    answer = await (await alice.press(dm, data=button.callback_data)).answer()
    assert answer != "That button is out of date."


async def test_a_press_answer_or_an_edit_applied_before_its_answer_was_lost_is_no_error(
    telegram: FakeTelegram, start_bot: BotFactory, caplog: pytest.LogCaptureFixture
) -> None:
    await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    caplog.set_level(logging.WARNING)
    telegram.lose_next_response("answerCallbackQuery")
    telegram.lose_next_response("editMessageText", chat=group)
    await (await alice.press(lobby, "Add computer")).answer()
    await telegram.wait_for(lambda: lobby.edit_count == 1, what="the lobby with a computer")
    def statuses() -> dict[str, list[int]]:
        return {m: [c.status for c in telegram.calls_of(m)] for m in ("answerCallbackQuery", "editMessageText")}

    await telegram.wait_for(lambda: all(len(s) == 2 for s in statuses().values()), what="both retries")
    await telegram.settle()
    assert statuses() == {"answerCallbackQuery": [0, 400], "editMessageText": [0, 400]}  # lost, then "done"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "retrying" not in r.getMessage()]
    await (await alice.press(lobby, "Add computer")).answer()  # and the lobby goes on as before
    await telegram.wait_for(lambda: lobby.edit_count == 2, what="a second computer")
