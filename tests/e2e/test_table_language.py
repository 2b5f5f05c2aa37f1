"""A group switched to English leaves alone the DMs of people who never chose a language."""

from __future__ import annotations

from fake_telegram import FakeTelegram
from harness import BotFactory
from table_players import hand_message, start_game


async def test_each_dm_speaks_its_owners_language_not_the_groups(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="zh", XUEZHAN_COMPUTER_DELAY="0", XUEZHAN_GROUP_UPDATE_SECONDS="3")
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    sent = await alice.send(group, "/lang en")
    await telegram.wait_for_bot_message(group, after=sent.message_id)
    await alice.start()
    sent = await alice.send(alice, "/lang en")  # Alice chooses English for herself; Bob never chooses
    await telegram.wait_for_bot_message(alice, after=sent.message_id)
    await bob.start()

    await alice.send(group, "/newgame")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    assert await (await bob.press(lobby, "Join")).answer() is not None
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob in the lobby")
    await start_game(telegram, alice, lobby)

    shown = await telegram.wait_for(lambda: (a := hand_message(telegram, alice)) and (b := hand_message(telegram, bob))
                                    and (a, b), timeout=20, what="both hands")
    alice_dm, bob_dm = shown
    assert alice_dm.caption.startswith("Hand 1"), alice_dm.caption
    assert bob_dm.caption.startswith("第 1 局"), bob_dm.caption
