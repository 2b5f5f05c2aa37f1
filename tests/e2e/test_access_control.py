"""Who may act on a table or a /keep session, tried by a stranger from another group.

Each test is an attack of issue 11 (and the drastic buttons of issue 13, item 5) replayed
through the fake Telegram: forged presses from another group's message, guessed deep links,
a double tap on Undo, a press for a session that does not exist, and a seated player who is
not the opener pressing End.
"""

from __future__ import annotations

from fake_telegram import ChatMessage, FakeChat, FakeTelegram, FakeUser
from harness import BotFactory
from table_players import HumanPlayer, game_buttons, hand_message, open_lobby, play_until_over, start_game

from bot.services import services

FAST = {"XUEZHAN_COMPUTER_DELAY": "0", "XUEZHAN_GROUP_UPDATE_SECONDS": "3", "XUEZHAN_LANG": "en"}


async def outsider_with_a_message(telegram: FakeTelegram) -> tuple[FakeUser, ChatMessage]:
    """Eve, in her own group, with a bot message there to forge presses on."""
    eve = telegram.user("Eve")
    other = telegram.group("Eve's", members=[eve], admins=[eve])
    await eve.start()
    await eve.send(other, "/help")
    return eve, await telegram.wait_for_bot_message(other)


async def test_forged_lobby_presses_and_guessed_links_seat_no_stranger(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]
    eve, elsewhere = await outsider_with_a_message(telegram)

    for verb in ("join", "cpu", "start", "go", "drop"):
        forged = await eve.press(elsewhere, data=f"lb:{table.id}:{verb}", check=False)
        assert await forged.answer() == "That button is out of date.", verb
    # The plain table id (what the old link carried) and a made-up signature are refused.
    # So are links typed by hand with digits that are not ASCII, or a signature that is not.
    for payload in (f"join_{table.id}", f"join_{table.id}_000000000000", "join_²_000000000000",
                    f"join_{table.id}_é"):
        sent = await eve.start(payload)
        answer = await telegram.wait_for_bot_message(eve, lambda m: "table" in (m.text or ""), after=sent.message_id)
        assert "no longer exists" in answer.text
    # The real link, passed on to someone outside the group, does not seat them either.
    link = lobby.button("Start me").url
    await eve.open_link(link)
    assert "Only members" in (await telegram.wait_for_bot_message(eve, lambda m: "members" in (m.text or ""))).text
    # A member of the group follows the same link and sits down.
    await bob.open_link(link)
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob in the lobby")

    seats = (await storage.get_table(table.id)).seats
    players = [await storage.get_player(p) for p in seats if p is not None]
    assert sorted(p.name for p in players) == ["Alice", "Bob"]
    assert all(p.user_id != eve.id for p in players)
    assert telegram.unanswered_presses() == []


async def test_start_asks_before_computers_fill_seats_and_cancel_asks_first(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    lobby = await open_lobby(telegram, alice, group)
    storage = services(app).storage
    await (await alice.press(lobby, "Start")).answer()
    await telegram.wait_for(lambda: "3 seats are empty" in lobby.text, what="the question")
    assert (await storage.open_tables(group.id))[0].status == "lobby"  # nothing filled yet
    assert await (await bob.press(lobby, "Start with")).answer() == \
        "Only the table's creator or a group admin can do that."
    await (await alice.press(lobby, "Wait for people")).answer()
    await telegram.wait_for(lambda: any(b.text == "Join" for b in lobby.buttons), what="the lobby again")
    assert None in (await storage.open_tables(group.id))[0].seats
    await start_game(telegram, alice, lobby)
    dm = await telegram.wait_for(lambda: (m := hand_message(telegram, alice)) and game_buttons(m) and m,
                                 what="Alice's swap buttons")

    await alice.send(group, "/cancel")
    question = await telegram.wait_for_bot_message(group, lambda m: "Cancel table" in (m.text or ""))
    table = (await storage.open_tables(group.id))[0]
    assert table.status == "playing"  # /cancel only asked
    assert "Only the table's creator" in (await (await bob.press(question, "Yes")).answer() or "")
    await (await alice.press(question, "Yes")).answer()
    await telegram.wait_for(lambda: "is cancelled" in question.text, what="the cancellation")
    # The finished table keeps no live buttons: Alice's DM swap buttons are gone.
    await telegram.wait_for(lambda: not game_buttons(dm), what="the DM buttons removed")
    assert (await storage.get_table(table.id)).status == "voided"
    assert await storage.verify() == []


async def test_next_and_end_belong_to_the_opener_or_a_majority(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await alice.start()
    await bob.start()
    lobby = await open_lobby(telegram, alice, group)
    await (await bob.press(lobby, "Join")).answer()
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob seated")
    await start_game(telegram, alice, lobby)
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice), HumanPlayer(telegram, bob)])
    storage = services(app).storage
    table = (await storage.open_tables(group.id))[0]

    eve, elsewhere = await outsider_with_a_message(telegram)
    end_data = card.button("End").callback_data
    forged = await eve.press(elsewhere, data=end_data, check=False)
    assert await forged.answer() == "That button is out of date."
    vote = await bob.press(card, "End")
    assert "1 of 2" in (await vote.answer() or "")
    assert (await storage.get_table(table.id)).status == "playing"  # one seated person is no majority
    await (await alice.press(card, "End")).answer()  # the opener decides
    await telegram.wait_for_bot_message(group, lambda m: "is over after 1 hand." in (m.text or ""))
    assert (await storage.get_table(table.id)).status == "finished"


async def test_leave_and_kick_hand_a_seat_to_the_computer(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(**FAST, XUEZHAN_DISCARD_SECONDS="60")
    people = [telegram.user(n) for n in ("Alice", "Bob", "Carol")]
    alice, bob, carol = people
    group = telegram.group("Friends", members=people, admins=[alice])
    for person in people:
        await person.start()
    lobby = await open_lobby(telegram, alice, group)
    for person in (bob, carol):
        await (await person.press(lobby, "Join")).answer()
    await telegram.wait_for(lambda: "Carol" in lobby.text, what="three seated")
    await start_game(telegram, alice, lobby)
    await telegram.wait_for(lambda: hand_message(telegram, bob), what="Bob's hand")

    refused = await bob.send(group, "/kick Carol")
    # The hand's table picture may reach the group after the command, so the answer is looked for.
    await telegram.wait_for_bot_message(
        group, lambda m: "Only the table's creator" in (m.text or ""), after=refused.message_id)
    await bob.send(group, "/leave")
    await telegram.wait_for_bot_message(group, lambda m: "Bob left" in (m.text or ""))
    await alice.send(group, "/kick Carol")
    await telegram.wait_for_bot_message(group, lambda m: "Carol was removed" in (m.text or ""))
    card = await play_until_over(telegram, group, [HumanPlayer(telegram, alice)], timeout=90)
    assert card.photo is not None  # the hand ended with only Alice deciding
    assert await services(app).storage.verify() == []


async def keep_panel(telegram: FakeTelegram, user: FakeUser, group: FakeChat, names: str) -> ChatMessage:
    sent = await user.send(group, f"/keep {names}")
    return await telegram.wait_for_bot_message(
        group, lambda m: (m.text or "").startswith(("Scorekeeping #", "Scorekeeping for")), after=sent.message_id)


async def test_keep_rejects_strangers_forged_sessions_and_a_double_undo(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice = telegram.user("Alice")
    group = telegram.group("Real tiles", members=[alice], admins=[alice])
    eve, elsewhere = await outsider_with_a_message(telegram)

    lobby = await keep_panel(telegram, alice, group, "me")
    lobby_data = lobby.button("I'm in").callback_data
    forged = await eve.press(elsewhere, data=lobby_data, check=False)
    assert await forged.answer() == "This button is no longer active."
    assert "(1/4)" in lobby.text
    # "/keep 老王" while the lobby waits adds 老王 to it instead of opening a second lobby.
    await alice.send(group, "/keep 老王")
    await telegram.wait_for(lambda: "(2/4)" in telegram.last_bot_message(group).text, what="老王 added")
    assert "老王" in telegram.last_bot_message(group).text
    await alice.send(group, "/keep Carol Dave")
    panel = await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Scorekeeping #"))
    storage = services(app).storage
    session = (await storage.open_sessions(group.id))[0]
    assert len(await storage.open_sessions(group.id)) == 1

    # A press naming a session that does not exist is answered, like any stale button.
    ghost = await eve.press(elsewhere, data="kp:9999:0:u", check=False)
    assert await ghost.answer() == "This button is no longer active."
    # A press from another group on the real panel is refused.
    stolen = await eve.press(elsewhere, data=panel.button("Undo last").callback_data, check=False)
    assert await stolen.answer() == "This button is no longer active."

    for text in ("Kong", "Alice", "concealed kong"):
        before = panel.edit_count
        await (await alice.press(panel, text)).answer()
        await telegram.wait_for(lambda b=before: panel.edit_count > b, what=text)
    assert len(await storage.session_records(session.id)) == 1
    undo = panel.button("Undo last").callback_data
    first, second = await alice.press(panel, data=undo), await alice.press(panel, data=undo, check=False)
    answers = {await first.answer(), await second.answer()}
    assert answers == {"Undone.", "That button is out of date."}
    records = await storage.session_records(session.id)
    assert len(records) == 2 and records[-1].undoes == records[0].id  # one undo, not two
    assert telegram.unanswered_presses() == []


async def test_opening_a_table_gives_no_say_over_the_chats_stakes(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await bob.start()
    lobby = await open_lobby(telegram, bob, group)  # Bob, not an admin, opens the table
    refused = await bob.press(lobby, "Settings")  # no menu for him at all
    assert "group admin" in (await refused.answer() or "") and refused.show_alert
    await (await alice.press(lobby, "Settings")).answer()
    menu = await telegram.wait_for_bot_message(group, lambda m: "Game" in str(m.buttons))
    for _ in range(2):
        refused = await bob.press(menu, "Game")
        assert "group admin" in (await refused.answer() or "") and refused.show_alert
    assert (await services(app).storage.get_chat(group.id)).base_stake == 1
    await (await alice.press(menu, "Game")).answer()  # an admin may
    await telegram.wait_for(lambda: "Base stake" in str(menu.buttons), what="the game page")
    await (await alice.press(menu, "Base stake")).answer()
    await telegram.wait_for(lambda: "st:v:base:1" in str(menu.buttons), what="the stakes")
    await (await alice.press(menu, data="st:v:base:1")).answer()
    assert (await services(app).storage.get_chat(group.id)).base_stake == 2


async def test_forged_presses_with_ids_no_row_can_have_are_answered(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    """Found by forging every kind of button's data: a 复盘 or /keep press naming a hand or session
    of twenty digits went on to SQLite, which cannot hold the number, and was never answered."""
    await start_bot(**FAST)
    eve, elsewhere = await outsider_with_a_message(telegram)
    huge = "9" * 20
    for data in (f"rv:{huge}", f"kp:{huge}:1:u", f"kp:1:{huge}:u", f"kl:{huge}:in", "kp:1:1:t:²"):
        press = await eve.press(elsewhere, data=data, check=False)
        assert await press.answer() == "This button is no longer active.", data
