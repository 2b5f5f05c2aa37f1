"""A press in a busy group is answered at once, and the lobby catches up with the table.

Telegram lets a bot send a group 20 messages a minute, and a group that asks a lot (here forty
/rules at once) has its replies queued for a minute. The answer to a press is not a message and
must not wait in that queue: Telegram stops showing an answer that comes seconds late. Before
this test, a lobby press waited for the edit of the press before it (made holding the chat's
lock) and a permission check waited for a group turn (getChatMember): 3 to 39 s here.
"""

from __future__ import annotations

import time

from fake_telegram import FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from table_players import HumanPlayer, open_lobby, play_until_over, start_game
from test_table_game import FAST

from bot.services import services
from engine.tiles import parse_tiles
from rendering import encode_png, render_tiles


async def test_lobby_presses_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                   start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    await alice.start()
    await bob.start()
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.send(group, "/newgame")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    for _ in range(40):
        await alice.send(group, "/rules")
    await telegram.wait_for(lambda: len(telegram.bot_messages(group)) >= 20, timeout=20, what="the first replies")

    slowest = 0.0
    for label in ("Join", "Add computer", "Leave", "Join", "Start", "Settings", "Table rules", "Cancel"):
        began = time.monotonic()
        await (await bob.press(lobby, label)).answer(timeout=5)
        slowest = max(slowest, time.monotonic() - began)
    assert slowest < 2.0  # a group turn is 3 s away at best, a minute at worst

    # The lobby shows the table as it is after all of them: Bob seated, one computer player.
    await telegram.wait_for(lambda: "Bob" in (lobby.text or "") and "AI-1" in (lobby.text or ""), timeout=90,
                            what="the lobby shown as it is now")


async def test_scorekeeping_presses_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                         start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Real tiles", members=[alice, bob], admins=[alice])
    await alice.send(group, "/keep me 老王 Dave")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "I'm in" in str(m.buttons))
    await (await bob.press(lobby, "I'm in")).answer()
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    for _ in range(40):
        await alice.send(group, "/rules")
    await telegram.wait_for(lambda: len(telegram.bot_messages(group)) >= 20, timeout=20, what="the first replies")

    kong = panel.button("Kong").callback_data
    await (await bob.press(panel, data=kong)).answer(timeout=5)  # its panel edit waits for a group turn
    began = time.monotonic()
    second = await bob.press(panel, data=kong, check=False)  # a second tap meanwhile
    await second.answer(timeout=5)
    assert time.monotonic() - began < 2.0


async def make_busy(telegram: FakeTelegram, user: FakeUser, group: FakeChat) -> None:
    """Forty /rules: twenty replies go at once, the other twenty wait a minute for the group's turns."""
    for _ in range(40):
        await user.send(group, "/rules")
    await telegram.wait_for(lambda: len(telegram.bot_messages(group)) >= 20, timeout=20, what="the first replies")


async def test_presses_after_a_hand_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                         start_bot: BotFactory) -> None:
    """The press that decides "Next hand" took the card's buttons off holding the chat's lock, so
    the next press waited for that edit's group turn: a minute here, and Telegram gave up on it."""
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    for person in (alice, bob):
        await person.start()
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    lobby = await open_lobby(telegram, alice, group)
    await (await bob.press(lobby, "Join")).answer()
    await start_game(telegram, alice, lobby)
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, p) for p in (alice, bob)], timeout=120)
    await make_busy(telegram, alice, group)

    next_hand = card.button("Next hand").callback_data
    began = time.monotonic()
    assert await (await alice.press(card, data=next_hand)).answer(timeout=5) is None  # the opener decides
    late = await bob.press(card, data=next_hand, check=False)  # the card still shows its buttons
    assert await late.answer(timeout=5) == "That button is out of date."
    assert time.monotonic() - began < 2.0
    table = (await services(app).storage.table_hands(1))
    assert len(table) == 2  # the next hand is dealt meanwhile


async def test_presses_after_a_cancel_in_a_busy_group_are_answered_at_once(telegram: FakeTelegram,
                                                                           start_bot: BotFactory) -> None:
    """Cancelling (and "Back") edited the question and the table's messages holding the chat's lock."""
    await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    for person in (alice, bob):
        await person.start()
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    lobby = await open_lobby(telegram, alice, group)
    sent = await alice.send(group, "/cancel")
    question = await telegram.wait_for_bot_message(group, after=sent.message_id)
    await make_busy(telegram, alice, group)

    began = time.monotonic()
    assert await (await alice.press(question, "Yes, cancel the table")).answer(timeout=5) is None
    late = await bob.press(lobby, "Join")
    assert await late.answer(timeout=5) == "That button is out of date."
    assert time.monotonic() - began < 2.0


async def test_presses_on_a_photo_correction_in_a_busy_group_are_answered_at_once(
        telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """A correction's press made its redraw holding the correction's lock, so the next press
    waited for that edit's group turn. Redraws now go out in the group's turn from the latest
    state (``bot.latest_edits``), and the last one shows every change."""
    await start_bot(XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Real tiles", members=[alice], admins=[alice])
    sent = await alice.send_photo(group, encode_png(render_tiles(parse_tiles("1112345678999m5m"))), caption="/score")
    fixing = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    await make_busy(telegram, alice, group)

    five = next(b for b in fixing.buttons if b.text.startswith("5m")).callback_data
    await (await alice.press(fixing, data=five)).answer(timeout=5)  # its redraw waits for a group turn
    began = time.monotonic()
    second = await alice.press(fixing, data=five, check=False)  # a second tap meanwhile
    assert await second.answer(timeout=5) == "That button is out of date."
    assert time.monotonic() - began < 2.0
    await telegram.wait_for(lambda: "pick its right suit" in (fixing.caption or ""), timeout=90,
                            what="the correction shown as the first tap left it")


async def test_situation_toggles_on_a_score_answer_in_a_busy_group_are_answered_at_once(
        telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """Each toggle re-valued the hand and edited the answer holding its lock, so a second toggle
    waited for the first one's group turn. Both are answered at once now, and the answer shows both."""
    await start_bot(XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Real tiles", members=[alice], admins=[alice])
    sent = await alice.send(group, "/score 1112345678999m +5m")
    answer = await telegram.wait_for_bot_message(group, lambda m: m.photo_file_id is not None, after=sent.message_id)
    await make_busy(telegram, alice, group)

    began = time.monotonic()
    for label in ("Self-draw", "Last tile"):
        await (await alice.press(answer, label)).answer(timeout=5)
    assert time.monotonic() - began < 2.0
    await telegram.wait_for(lambda: "last tile ×2" in (answer.caption or "") and "Self-draw." in (answer.caption or ""),
                            timeout=90, what="the answer valued with both situations")

