"""Hosted games end to end: the real bot, the fake Telegram, people pressing buttons in DMs."""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_telegram import SEND_METHODS, FakeTelegram, FakeUser
from harness import BotFactory, clean_environment
from table_players import (
    HumanPlayer,
    alone_at_a_table,
    game_buttons,
    hand_message,
    open_lobby,
    play_until_over,
    start_game,
)

from bot.services import services
from bot.table.feature import TABLES_KEY
from engine.actions import Action
from engine.game import Game
from engine.rules import RuleSet

FAST = {"XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_GROUP_UPDATE_SECONDS": "3", "XUEZHAN_LANG": "en"}


async def sit(telegram: FakeTelegram, lobby, *users: FakeUser) -> None:
    for user in users:
        await user.start()
        press = await user.press(lobby, "Join")
        assert await press.answer() in ("You are seated.", "You are already seated.")


async def test_two_people_and_two_computers_play_a_hand_to_the_settlement(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    assert "Alice" in lobby.text  # the creator, reachable by DM, sits down at once
    await sit(telegram, lobby, bob)
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob in the lobby")
    assert await (await bob.press(lobby, "Start")).answer() is not None  # only the creator or an admin
    await start_game(telegram, alice, lobby)

    # Each person gets their hand by DM; the group gets one table picture.
    for user in (alice, bob):
        await telegram.wait_for(lambda u=user: hand_message(telegram, u), what=f"{user.first_name}'s hand")
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice), HumanPlayer(telegram, bob)])
    # The settlement's caption carries the facts: every net, each win and who paid it, the end.
    assert card.photo is not None and card.caption.startswith("Hand 1 settled")
    nets = next(line for line in card.caption.splitlines() if line.startswith("Net: "))
    assert all(name in nets for name in ("Alice", "Bob")) and "Hand over" in card.caption
    # Each win card's caption says who won and who pays (a notification never reads just "Photo").
    for win in [m for m in telegram.bot_messages(group) if (m.caption or "").startswith("Hand 1: ")]:
        assert " wins on " in win.caption and " pay" in win.caption, win.caption

    storage = services(app).storage
    hands = await storage.table_hands((await storage.open_tables(group.id))[0].id)
    assert len(hands) == 1 and hands[0].status == "finished"
    result = hands[0].result
    assert sum(result["chips"]) == 0
    assert await storage.verify() == []
    # The log replays to the same end, and the chips booked equal the game's.
    logged = [Action.from_dict(a.action) for a in await storage.hand_actions(hands[0].id)]
    replayed = Game.replay(RuleSet.from_dict(hands[0].rules), hands[0].seed, hands[0].dealer, logged)
    assert replayed.over and replayed.chips() == result["chips"]
    assert telegram.unanswered_presses() == []


async def test_presses_from_strangers_and_stale_buttons_change_nothing(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST, XUEZHAN_DISCARD_SECONDS="60")
    alice, eve = telegram.user("Alice"), telegram.user("Eve")
    group = telegram.group("Friends", members=[alice, eve], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    await start_game(telegram, alice, lobby)
    dm = await telegram.wait_for(lambda: hand_message(telegram, alice), what="Alice's hand")
    await telegram.wait_for(lambda: game_buttons(dm), what="swap buttons")
    button, _ = game_buttons(dm)[0]

    foreign = await eve.press(dm, data=button.callback_data, check=False)
    assert await foreign.answer() == "This is not your seat."
    forged = await alice.press(dm, data=button.callback_data.replace(":t", ":d"), check=False)
    assert await forged.answer() == "That button is out of date."
    stale = await alice.press(dm, data=button.callback_data.replace("gm:1:", "gm:1:9", 1), check=False)
    assert await stale.answer() in ("That button is out of date.", "This hand is over.")
    assert telegram.unanswered_presses() == []

    # A toggle only changes the buttons: the picture is not uploaded again.
    photo = dm.photo_file_id
    await (await alice.press(dm, data=button.callback_data)).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("✓") for b in dm.buttons), what="the toggle shown")
    assert dm.photo_file_id == photo
    assert telegram.calls_of("editMessageReplyMarkup")


@pytest.mark.both_backends
async def test_a_press_the_table_cannot_take_yet_is_answered_at_once_and_made_later(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """Telegram shows a spinner on the button until the press is answered: a busy table (here
    held by the test, in production a long step or the database) must not keep it spinning."""
    app = await start_bot(**FAST, XUEZHAN_DISCARD_SECONDS="60")
    alice, _ = await alone_at_a_table(telegram)
    dm = await telegram.wait_for(lambda: hand_message(telegram, alice), what="Alice's hand")
    await telegram.wait_for(lambda: game_buttons(dm), what="swap buttons")
    button, _ = game_buttons(dm)[0]
    (runner,) = app.bot_data[TABLES_KEY].runners.values()

    async with runner.lock:  # the table is busy for as long as the test likes
        press = await alice.press(dm, data=button.callback_data)
        assert await press.answer() is None
        assert not any(b.text.startswith("✓") for b in dm.buttons)
    await telegram.wait_for(lambda: any(b.text.startswith("✓") for b in dm.buttons), what="the pick made")
    assert telegram.unanswered_presses() == []


async def test_a_player_who_never_started_the_bot_is_offered_the_start_me_link(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice, carol = telegram.user("Alice"), telegram.user("Carol")
    group = telegram.group("Friends", members=[alice, carol], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    refused = await carol.press(lobby, "Join")
    assert "private chat" in (await refused.answer() or "") and refused.show_alert
    link = lobby.button("Start me").url
    assert link is not None
    await carol.open_link(link)
    reply = await telegram.wait_for_bot_message(carol, lambda m: "seated" in (m.text or ""))
    assert "table #" in reply.text
    await telegram.wait_for(lambda: "Carol" in lobby.text, what="Carol in the lobby")


@pytest.mark.both_backends
async def test_a_restart_mid_hand_continues_the_same_hand(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)
    player = HumanPlayer(telegram, alice)
    # Into the play: the swap's picks and confirm, the void, and her first move, which she always
    # has (a hand she might win by then would have no decision left for her: she would be out).
    made = 0
    while made < 4:
        await telegram.wait_for(lambda: hand_message(telegram, alice) and game_buttons(hand_message(telegram, alice)),
                                timeout=30, what="a decision")
        if await player.act():
            made += 1
        else:  # the picks are still on their way to the DM: its confirm button comes next
            await asyncio.sleep(0.05)
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]
    hand_before = (await storage.table_hands(table.id))[-1]
    logged_before = len(await storage.hand_actions(hand_before.id))
    await start_bot.stop(app)

    app = await start_bot(**FAST)
    await telegram.wait_for_bot_message(group, lambda m: "continues" in (m.text or ""), timeout=10)
    storage = services(app).storage
    hands = await storage.table_hands(table.id)
    assert [h.id for h in hands] == [hand_before.id]
    assert len(await storage.hand_actions(hand_before.id)) >= logged_before
    card = await play_until_over(telegram, group, [player])
    assert card.photo is not None
    finished = (await storage.table_hands(table.id))[-1]
    assert finished.id == hand_before.id and finished.status == "finished"
    assert await storage.verify() == []


async def test_no_group_message_or_picture_shows_a_hidden_hand(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)
    await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    # Every photo the group ever got is a table or a card; the DM pictures never went there.
    dm_photos = {v.photo_file_id for m in telegram.all_bot_messages(alice) for v in m.versions if v.photo_file_id}
    group_photos = {v.photo_file_id for m in telegram.all_bot_messages(group) for v in m.versions if v.photo_file_id}
    assert dm_photos and group_photos and not dm_photos & group_photos
    assert telegram.max_sends_per_minute(group) <= 20
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]
    assert json.dumps((await storage.table_hands(table.id))[0].result)


async def test_two_timeouts_hand_the_seat_to_the_computer_until_im_back(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    # Computers pause between moves so the hand is still on when "I'm back" is pressed on a busy machine.
    await start_bot(**{**FAST, "XUEZHAN_COMPUTER_DELAY": "0.3"}, XUEZHAN_DISCARD_SECONDS="1", XUEZHAN_CLAIM_SECONDS="1")
    alice, group = await alone_at_a_table(telegram)
    notice = await telegram.wait_for_bot_message(group, lambda m: "ran out of time" in (m.text or ""), timeout=15)
    assert "Alice" in notice.text
    dm = await telegram.wait_for(
        lambda: (m := hand_message(telegram, alice)) and any("I'm back" in b.text for b in m.buttons) and m,
        timeout=10, what="the I'm back button",
    )
    back = await alice.press(dm, "I'm back")
    assert await back.answer() is None
    await asyncio.sleep(0)


async def test_four_people_play_a_hand(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    people = [telegram.user(name) for name in ("Alice", "Bob", "Carol", "Dave")]
    group = telegram.group("Friends", members=people, admins=people[:1])
    await people[0].start()
    lobby = await open_lobby(telegram, people[0], group)
    await sit(telegram, lobby, *people[1:])
    await telegram.wait_for(lambda: "Dave" in lobby.text, what="a full lobby")
    await (await people[0].press(lobby, "Start")).answer()
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, p) for p in people], timeout=90)
    assert card.photo is not None
    storage = services(app).storage
    hand = (await storage.table_hands((await storage.open_tables(group.id))[0].id))[0]
    players = [await storage.get_player(p) for p in hand.seats]
    assert all(p.user_id for p in players)  # no computer seat
    assert await storage.verify() == []


async def test_flood_control_and_server_errors_lose_nothing(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    telegram.group_limit_per_minute = 20
    app = await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    telegram.fail_next("sendPhoto", 1, status=429, retry_after=1)
    telegram.fail_next("editMessageMedia", 2, status=502)
    await start_game(telegram, alice, lobby)
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    assert card.photo is not None
    assert [c.status for c in telegram.calls_of("sendPhoto")][:1] == [429]
    edits = {"editMessageMedia", "editMessageText", "editMessageCaption", "editMessageReplyMarkup"}
    assert telegram.max_sends_per_minute(group, methods=SEND_METHODS | edits) <= 20
    assert await services(app).storage.verify() == []


async def test_a_player_who_blocks_the_bot_is_played_by_the_computer(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    await sit(telegram, lobby, bob)
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob in the lobby")
    bob.block()
    await start_game(telegram, alice, lobby)
    notice = await telegram.wait_for_bot_message(group, lambda m: "private message" in (m.text or ""), timeout=10)
    assert "Bob" in notice.text
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    assert card.photo is not None


async def test_next_hand_rotates_the_dealer_and_end_sums_up_the_session(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, group = await alone_at_a_table(telegram)
    player = HumanPlayer(telegram, alice)
    first = await play_until_over(telegram, group, [player])
    old_end = first.button("End").callback_data
    await (await alice.press(first, "Next hand")).answer()
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]
    await telegram.wait_for_bot_message(group, lambda m: m.message_id > first.message_id and m.photo_file_id
                                        is not None, timeout=10)
    hands = await storage.table_hands(table.id)
    assert len(hands) == 2 and hands[1].dealer == hands[0].result["next_dealer"]
    second = await play_until_over(telegram, group, [player])
    assert second.message_id > first.message_id
    stale = await alice.press(first, data=old_end, check=False)  # the first hand's buttons are gone
    assert await stale.answer() == "That button is out of date."
    await (await alice.press(second, "End")).answer()
    summary = await telegram.wait_for_bot_message(group, lambda m: "is over after 2 hands" in (m.text or ""))
    totals = [await storage.get_player(p) for p in hands[0].seats]
    assert all(p.name in summary.text for p in totals)
    assert (await storage.get_table(table.id)).status == "finished"


async def test_the_plain_words_开桌_and_开局_open_a_table_where_the_bot_reads_the_group(tmp_path, monkeypatch) -> None:
    for name in clean_environment():
        monkeypatch.delenv(name)
    async with FakeTelegram(privacy_mode=False) as telegram:
        factory = BotFactory(telegram, tmp_path / "xuezhan.db")
        try:
            await factory(**FAST)
            alice = telegram.user("Alice")
            group = telegram.group("Friends", members=[alice], admins=[alice])
            await alice.send(group, "开桌")
            lobby = await telegram.wait_for_bot_message(group, lambda m: "table #1" in (m.text or ""))
            await alice.send(group, "开局")  # the same as a second /newgame: the lobby again, below
            await telegram.wait_for_bot_message(group, lambda m: "table #1" in (m.text or ""), after=lobby.message_id)
            await alice.send(group, "开桌吧，我们四个人")  # a sentence that only starts so is left alone
            await telegram.settle()
            assert len(telegram.bot_messages(group)) == 1 and lobby.deleted
        finally:
            await factory.close()


async def test_a_group_that_refuses_pictures_gets_its_table_in_text_and_goes_on(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """Its members may not send photos, nor may the bot (no admin). The table was silent there:
    no results and no Next hand / End buttons, so it stalled after its first hand."""
    await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    group.photos_allowed = False
    await alice.start()
    await start_game(telegram, alice, await open_lobby(telegram, alice, group))
    player = HumanPlayer(telegram, alice)
    first = await play_until_over(telegram, group, [player])
    assert first.photo is None and first.text.startswith("Hand 1 settled") and "Net: " in first.text
    told = [m for m in telegram.bot_messages(group) if "does not let me send pictures" in (m.text or "")]
    assert len(told) == 1
    table = next(m for m in telegram.bot_messages(group) if (m.text or "").startswith("Hand 1 · Wall"))
    await telegram.wait_for(lambda: "Hand over" in table.text, what="the table message to follow the hand as text")

    await (await alice.press(first, "Next hand")).answer()
    await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Hand 2 · Wall"), timeout=10)
    await telegram.wait_for(lambda: not first.buttons, what="the first card's buttons gone")
    second = await play_until_over(telegram, group, [player])
    assert second.text.startswith("Hand 2 settled")
    assert len([m for m in telegram.bot_messages(group) if "does not let me send pictures" in (m.text or "")]) == 1
    assert not [m for m in telegram.bot_messages(group) if m.photo is not None]

    await (await alice.press(second, "Next hand")).answer()
    third = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Hand 3 · Wall"))
    sent = await alice.send(group, "/cancel")
    question = await telegram.wait_for_bot_message(group, lambda m: "Cancel table" in (m.text or ""),
                                                   after=sent.message_id)
    await (await alice.press(question, "Yes, cancel the table")).answer()
    await telegram.wait_for(lambda: third.text == "Table #1 is cancelled.", what="the text table cancelled")
    assert telegram.unanswered_presses() == []


async def test_newgame_brings_the_lobby_or_the_hand_s_result_down_and_names_a_table_at_play(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """The lobby, or the result with Next hand / End, scrolled away up a busy chat (or an admin
    deleted it): /newgame told the person to /cancel the very table they wanted to play at."""
    await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    first = await open_lobby(telegram, alice, group)
    sent = await bob.send(group, "/newgame")
    again = await telegram.wait_for_bot_message(group, lambda m: "table #1" in (m.text or ""), after=sent.message_id)
    await telegram.wait_for(lambda: first.deleted, what="the old lobby message gone")
    assert "Alice" in again.text and again.button("Join")
    await sit(telegram, again, bob)
    await telegram.wait_for(lambda: "Bob" in again.text, what="Bob in the lobby below")
    await start_game(telegram, alice, again)
    sent = await bob.send(group, "/newgame")
    await telegram.wait_for_bot_message(group, lambda m: "already has table #1" in (m.text or ""),
                                        after=sent.message_id)

    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice), HumanPlayer(telegram, bob)])
    sent = await bob.send(group, "/newgame")
    below = await telegram.wait_for_bot_message(group, lambda m: (m.caption or "").startswith("Hand 1 settled"),
                                                after=sent.message_id)
    assert below.caption == card.caption and below.button("Next hand")
    await (await bob.press(below, "Next hand")).answer()  # a player's vote: one of two is not enough
    await (await alice.press(below, "Next hand")).answer()
    await telegram.wait_for_bot_message(group, lambda m: (m.caption or "").startswith("Hand 2 · Wall"),
                                        after=below.message_id)
    assert await (await alice.press(card, "Next hand")).answer() == "That button is out of date."


async def test_a_table_message_in_text_is_edited_as_text_by_a_presenter_that_did_not_post_it(
    telegram: FakeTelegram, start_bot: BotFactory, caplog
) -> None:
    """Several workers: the worker that posted the table found the group refuses pictures, and
    another takes the hand up, not knowing. Its caption edits failed on a text message, each with a
    warning, and the group's table stood still."""
    app = await start_bot(**{**FAST, "XUEZHAN_GROUP_UPDATE_SECONDS": "0.2"})
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice], admins=[alice])
    group.photos_allowed = False
    await alice.start()
    await start_game(telegram, alice, await open_lobby(telegram, alice, group))
    table = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Hand 1 · Wall"))
    tables = app.bot_data[TABLES_KEY]
    (runner,) = tables.runners.values()
    tables.presenter._shows[runner.table_id].photos_refused = False  # as a worker that never posted it
    await play_until_over(telegram, group, [HumanPlayer(telegram, alice)])
    await telegram.wait_for(lambda: "Hand over" in table.text, what="the text table at the hand's end")
    assert not [r for r in caplog.records if "could not edit the table message" in r.getMessage()]
