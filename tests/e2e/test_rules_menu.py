"""/rules and /settings through the fake Telegram: plain words, buttons, who may change them."""

from __future__ import annotations

from fake_telegram import FakeTelegram
from harness import BotFactory

from bot.services import services
from engine.rules import GameMode, RuleSet


async def test_rules_are_explained_in_plain_words(telegram: FakeTelegram, start_bot: BotFactory) -> None:
    await start_bot(XUEZHAN_LANG="en")
    alice = telegram.user("Alice")
    group = telegram.group("Friends", members=[alice])
    await alice.send(group, "/rules")
    text = (await telegram.wait_for_bot_message(group)).text
    assert text.startswith("Rules of this chat (Chengdu), base stake 1:")
    assert "Cap: 8×" in text and "Swap three: on" in text and "Self-draw: adds a base" in text


async def test_settings_buttons_change_the_chats_rules_for_admins_only(
    telegram: FakeTelegram, start_bot: BotFactory
) -> None:
    app = await start_bot(XUEZHAN_LANG="en")
    admin, member = telegram.user("Admin"), telegram.user("Member")
    group = telegram.group("Friends", members=[member], admins=[admin])
    await admin.send(group, "/settings")
    menu = await telegram.wait_for_bot_message(group)

    refused = await member.press(menu, "Cap")
    assert "admin" in (await refused.answer() or "") and refused.show_alert
    assert (await services(app).storage.get_chat(group.id)).rules == {}

    await (await admin.press(menu, "Cap: 8×")).answer()
    await telegram.wait_for(lambda: any("Cap: 16×" in b.text for b in menu.buttons), what="cap 16")
    await (await admin.press(menu, "bloody river")).answer()
    await telegram.wait_for(lambda: any(b.text.startswith("✓ bloody river") for b in menu.buttons), what="preset")
    await (await admin.press(menu, "Base stake")).answer()
    await telegram.wait_for(lambda: any("Base stake: 2" in b.text for b in menu.buttons), what="base 2")

    chat = await services(app).storage.get_chat(group.id)
    rules = RuleSet.from_dict(chat.rules)
    assert rules.mode is GameMode.BLOODY_RIVER and rules.cap == 8  # the preset replaced the custom cap
    assert chat.base_stake == 2
    await alice_reads_new_rules(telegram, group, member)


async def alice_reads_new_rules(telegram: FakeTelegram, group, member) -> None:
    await member.send(group, "/rules")
    text = (await telegram.wait_for_bot_message(group, lambda m: (m.text or "").startswith("Rules"))).text
    assert "(bloody river), base stake 2" in text and "Mode: bloody river (winners play on)" in text
