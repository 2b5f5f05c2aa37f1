"""/rules and /settings through the fake Telegram: plain words, short pages, who may change them."""

from __future__ import annotations

import logging

import pytest
from fake_telegram import FakeTelegram
from harness import BotFactory

from bot.services import services
from engine.rules import FlowerPigPenalty, GameMode, PassWinScope, RuleSet

PHONE_ROWS = 9  # a keyboard taller than this does not fit a phone screen under the message


async def test_rules_are_explained_in_plain_words(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    await alice.send(group, "/rules")
    text = (await telegram.wait_for_bot_message(group)).text
    lines = text.splitlines()
    assert lines[0] == "Rules of this chat (Chengdu), base stake 1:"
    assert lines[1] == "This table plays the book's defaults."
    assert "• Cap: 8×" in lines and "• Swap three: on" in lines and "• Self-draw: adds a base" in lines
    assert "• After passing a win (过水): no discard win until your next draw" in lines
    assert "【Empty wall】" in lines and "• Three-suit penalty: 16×" in lines


async def test_rules_put_a_tables_house_rules_first_in_chinese(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot()
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    rules = RuleSet(pass_win_scope=PassWinScope.SAME_TILE, flower_pig_pays=FlowerPigPenalty.NINE)
    await services(app).storage.update_chat(group.id, rules=rules.to_dict())
    await alice.send(group, "/rules")
    text = (await telegram.wait_for_bot_message(group)).text
    assert text.splitlines()[1] == "本桌：过水：只限同一张牌；查花猪赔：9"


async def test_only_admins_get_the_menu_and_others_one_line(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    admin, member = telegram.user("Admin"), telegram.user("Member")
    group = telegram.group("Friends", members=[member], admins=[admin])
    await member.send(group, "/settings")
    refusal = await telegram.wait_for_bot_message(group)
    assert refusal.buttons == [] and "/rules" in refusal.text and "\n" not in refusal.text
    await member.send(group, "/lang")
    refusal = await telegram.wait_for_bot_message(group, after=refusal.message_id)
    assert refusal.buttons == [] and "admin" in refusal.text
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group, after=refusal.message_id)
    assert len(menu.keyboard) <= PHONE_ROWS
    pressed = await member.press(menu, "Hand values")
    assert "admin" in (await pressed.answer() or "") and pressed.show_alert


async def test_a_value_is_picked_from_its_own_page_and_saved(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(XUEZHAN_LANG="en")
    admin = telegram.user("Admin")
    group = telegram.group("Friends", admins=[admin])
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group)

    await (await admin.press(menu, "Winning")).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("After passing a win") for b in menu.buttons), what="group")
    assert len(menu.keyboard) <= PHONE_ROWS
    await (await admin.press(menu, "After passing a win")).answer()
    await telegram.wait_for(lambda: any("only the same tile" in b.text for b in menu.buttons), what="values")
    assert [b.text for b in menu.buttons][:3] == [
        "✓ no discard win until your next draw", "only the same tile is barred", "no bar"]
    saved = await admin.press(menu, "only the same tile")
    assert "next hand" in (await saved.answer() or "")
    await telegram.wait_for(
        lambda: any(b.text == "After passing a win (过水): only the same tile is barred" for b in menu.buttons),
        what="back on the group page with the new value")
    chat = await services(app).storage.get_chat(group.id)
    assert RuleSet.from_dict(chat.rules).pass_win_scope is PassWinScope.SAME_TILE

    await (await admin.press(menu, "Back")).answer()
    await telegram.wait_for(lambda: any("Game" in b.text for b in menu.buttons), what="main page")
    await (await admin.press(menu, "Game")).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("Base stake") for b in menu.buttons), what="game page")
    await (await admin.press(menu, "Base stake")).answer()
    await telegram.wait_for(lambda: any(b.text == "5" for b in menu.buttons), what="stakes")
    await (await admin.press(menu, data="st:v:base:2")).answer()
    await telegram.wait_for(lambda: any(b.text == "Base stake: 5" for b in menu.buttons), what="stake 5")
    assert (await services(app).storage.get_chat(group.id)).base_stake == 5


async def test_a_group_saves_its_own_preset_and_returns_to_it(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    app = await start_bot(XUEZHAN_LANG="en")
    admin, member = telegram.user("Admin"), telegram.user("Member")
    group = telegram.group("Friends", members=[member], admins=[admin])
    storage = services(app).storage
    ours = RuleSet(flower_pig_pays=FlowerPigPenalty.NINE, cap=16)
    await storage.update_chat(group.id, rules=ours.to_dict())
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group)
    saved = await admin.press(menu, "Save as this group's rules")
    assert "new tables" in (await saved.answer() or "")
    await telegram.wait_for(lambda: any(b.text == "✓ this group's rules" for b in menu.buttons), what="own preset")

    await (await admin.press(menu, "bloody river")).answer()
    await telegram.wait_for(lambda: any(b.text == "this group's rules" for b in menu.buttons), what="unticked")
    assert RuleSet.from_dict((await storage.get_chat(group.id)).rules).mode is GameMode.BLOODY_RIVER

    await (await admin.press(menu, "this group's rules")).answer()
    await telegram.wait_for(lambda: any(b.text == "✓ this group's rules" for b in menu.buttons), what="back")
    assert RuleSet.from_dict((await storage.get_chat(group.id)).rules) == ours
    await member.send(group, "/rules")
    text = (await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Rules"))).text
    assert text.startswith("Rules of this chat (this group's rules), base stake 1:")
    assert "This table: Cap: 16×; Three-suit penalty: 9×" in text


async def test_changing_a_setting_redraws_the_open_lobby(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    admin = telegram.user("Admin")
    group = telegram.group("Friends", admins=[admin])
    await admin.send(group, "/newgame")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "cap 8" in (m.text or ""))
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group, after=lobby.message_id)
    await (await admin.press(menu, "Hand values")).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("Cap") for b in menu.buttons), what="values page")
    await (await admin.press(menu, "Cap")).answer()
    await telegram.wait_for(lambda: any(b.text == "16×" for b in menu.buttons), what="caps")
    await (await admin.press(menu, "16×")).answer()
    await telegram.wait_for(lambda: "cap 16" in (lobby.text or ""), what="the lobby shows cap 16")
    for _ in range(4):  # a full lobby offers no seat and says who starts
        await (await admin.press(lobby, "Add computer")).answer()
    await telegram.wait_for(lambda: "The table is full" in (lobby.text or ""), what="a full lobby")
    assert not any(b.text in ("Join", "Add computer") for b in lobby.buttons)
    assert "Press Join" not in lobby.text and "cap 16" in lobby.text


async def test_a_press_that_changes_nothing_sends_no_edit(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    """Pressing the page a menu already shows (a double tap) is answered, and no edit is sent that
    Telegram would refuse as "not modified"."""
    await start_bot(XUEZHAN_LANG="en")
    admin = telegram.user("Admin")
    group = telegram.group("Friends", admins=[admin])
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group)
    winning = menu.button("Winning").callback_data
    await (await admin.press(menu, data=winning)).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("After passing a win") for b in menu.buttons), what="group")
    edits = len(telegram.calls_of("editMessageText"))
    await (await admin.press(menu, data=winning, check=False)).answer()  # the page it shows, tapped again
    await telegram.settle()
    assert len(telegram.calls_of("editMessageText")) == edits
    assert not [c for c in telegram.calls if c.status != 200]


async def test_a_new_preset_is_shown_in_the_open_lobby(telegram: FakeTelegram, start_bot: BotFactory,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    await start_bot(XUEZHAN_LANG="en")
    admin = telegram.user("Admin")
    group = telegram.group("Friends", admins=[admin])
    await admin.send(group, "/newgame")
    lobby = await telegram.wait_for_bot_message(group, lambda m: "table #" in (m.text or ""))
    assert "Rules: Chengdu" in lobby.text
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group, lambda m: bool(m.buttons), after=lobby.message_id)
    await (await admin.press(menu, data="st:p:xueliu")).answer()
    await telegram.wait_for(lambda: "Rules: bloody river" in (lobby.text or ""), what="the lobby with the new preset")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
