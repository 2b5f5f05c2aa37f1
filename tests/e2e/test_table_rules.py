"""A table's opener chooses rules for that table only (issue 11, item 4).

The chat's rules and stake stay the admins' (test_access_control.py); the opener's "Table rules"
menu writes the table's own rules, the lobby shows them to everyone before the start, the hand
is dealt under them with the chat's stake, and nothing changes once the hand has started.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from fake_telegram import FakeTelegram
from harness import BotFactory
from table_players import open_lobby, start_game
from test_access_control import FAST, outsider_with_a_message

from bot.services import services
from engine.rules import GameMode, RuleSet
from storage import InvalidWrite


async def test_the_opener_picks_this_tables_rules_everyone_sees_them_and_they_freeze_at_the_start(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(**FAST)
    storage = services(app).storage
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.group("Friends", members=[alice, bob], admins=[alice])
    await bob.start()
    lobby = await open_lobby(telegram, bob, group)  # Bob, not an admin, opens the table
    table = (await storage.open_tables(group.id))[0]

    refused = await alice.press(lobby, "Table rules")  # even an admin: the table is Bob's
    assert "opener" in (await refused.answer() or "") and refused.show_alert
    await (await bob.press(lobby, "Table rules")).answer()
    menu = await telegram.wait_for_bot_message(group, lambda m: "Rules for table" in (m.text or ""))
    assert "Save as this group's rules" not in str(menu.buttons)  # that is the admins' menu
    refused = await alice.press(menu, "Game")
    assert "opener" in (await refused.answer() or "")
    eve, elsewhere = await outsider_with_a_message(telegram)
    forged = await eve.press(elsewhere, data=f"tr:{table.id}:v:mode:1", check=False)
    assert await forged.answer() == "That button is out of date."

    await (await bob.press(menu, "Game")).answer()
    await telegram.wait_for(lambda: "Mode" in str(menu.buttons), what="the game page")
    assert "Base stake" not in str(menu.buttons)  # stakes are the chat's
    await (await bob.press(menu, "Mode")).answer()
    await telegram.wait_for(lambda: f"tr:{table.id}:v:mode:1" in str(menu.buttons), what="the modes")
    saved = await bob.press(menu, data=f"tr:{table.id}:v:mode:1")
    assert await saved.answer() == "Saved for this table only."
    # Everyone in the lobby sees the table's settings before sitting down.
    await telegram.wait_for(lambda: "by the opener" in (lobby.text or ""), what="the table's rules")
    assert "bloody river" in lobby.text
    chat = await storage.get_chat(group.id)
    assert RuleSet.from_dict(chat.rules).mode is GameMode.BLOODY_BATTLE  # the chat's rules are untouched
    await storage.update_chat(group.id, base_stake=5)  # an admin's stake change still applies

    await (await bob.press(lobby, "Join")).answer()
    await telegram.wait_for(lambda: "Bob" in lobby.text, what="Bob seated")
    await start_game(telegram, bob, lobby)
    deadline = time.monotonic() + 30
    while not (unfinished := await storage.unfinished_hands()):
        assert time.monotonic() < deadline, "the hand was not dealt"
        await asyncio.sleep(0.05)
    dealt = RuleSet.from_dict(unfinished[0].hand.rules)
    assert dealt.mode is GameMode.BLOODY_RIVER and dealt.base == 5

    # Once the hand has started the table's rules are fixed, from the menu and in storage.
    late = await bob.press(menu, data=f"tr:{table.id}:v:mode:0", check=False)
    assert "already started" in (await late.answer() or "")
    with pytest.raises(InvalidWrite):
        await storage.set_table_rules(table.id, None)
    assert RuleSet.from_dict((await storage.get_table(table.id)).rules or {}).mode is GameMode.BLOODY_RIVER
