"""/rules and /settings: a chat's rules in plain words, and every table setting behind a button.

Settings belong to the chat and apply from the next hand dealt (a hand keeps the rules it was
dealt under, which its log records). Each button cycles one setting through its values; only
a group admin or a bot admin may change them: they are the whole chat's stakes, so opening a
table gives no say over them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import CallbackQueryHandler, CommandHandler

from bot.feature import Command, Context, Feature
from bot.i18n import N_, Translator
from bot.messaging import edit_query_text
from bot.permissions import is_chat_admin
from bot.services import services, texts_for
from engine.rules import (
    CAPS,
    PRESETS,
    DirectKongPayment,
    FlowerPigPenalty,
    GameMode,
    KongFlowerPayer,
    LastFour,
    PassWinScope,
    RuleSet,
    SelfDrawBonus,
)

SETTINGS_PATTERN = re.compile(r"^st:(open|p:[a-z]{1,12}|c:[a-z_]{1,40})$")
BASE_STAKES = (1, 2, 5, 10, 20, 50, 100)


@dataclass(frozen=True)
class Setting:
    """One line of /settings: the RuleSet field, its label, its values in cycle order, their words."""

    field: str
    label: str
    values: tuple[Any, ...]
    words: Callable[[Any, Translator], str]


def _on_off(value: Any, texts: Translator) -> str:
    return texts.t("on") if value else texts.t("off")


def _enum_words(words: dict[Any, str]) -> Callable[[Any, Translator], str]:
    return lambda value, texts: texts.t(words[value])


SETTINGS: tuple[Setting, ...] = (
    Setting("mode", N_("Mode"), tuple(GameMode), _enum_words({
        GameMode.BLOODY_BATTLE: N_("bloody battle (winners leave)"),
        GameMode.BLOODY_RIVER: N_("bloody river (winners play on)"),
        GameMode.FIRST_WIN: N_("first win ends the hand"),
    })),
    Setting("swap_three", N_("Swap three"), (True, False), _on_off),
    Setting("cap", N_("Cap"), CAPS, lambda v, texts: texts.t("none") if v is None else f"{v}×"),
    Setting("self_draw", N_("Self-draw"), tuple(SelfDrawBonus), _enum_words({
        SelfDrawBonus.ADD_BASE: N_("adds a base"),
        SelfDrawBonus.DOUBLE: N_("doubles"),
        SelfDrawBonus.NONE: N_("no extra"),
    })),
    Setting("pass_win_scope", N_("No win on a discard after passing one"), (PassWinScope.ANY, PassWinScope.OFF),
            lambda v, texts: _on_off(v is not PassWinScope.OFF, texts)),
    Setting("last_four", N_("Must win in the last four tiles"), (LastFour.DRAWS_AND_DISCARDS, LastFour.OFF),
            lambda v, texts: _on_off(v is not LastFour.OFF, texts)),
    Setting("last_tile_bonus", N_("Last tile doubles"), (True, False), _on_off),
    Setting("concealed_hand_bonus", N_("Concealed hand doubles"), (False, True), _on_off),
    Setting("no_terminals_bonus", N_("No ones or nines doubles"), (False, True), _on_off),
    Setting("kong_flower_payer", N_("Win on a fed kong's replacement"), tuple(KongFlowerPayer), _enum_words({
        KongFlowerPayer.EVERYONE: N_("everyone pays"),
        KongFlowerPayer.FEEDER: N_("the feeder pays alone"),
    })),
    Setting("direct_kong_payment", N_("Kong on a discard earns"), tuple(DirectKongPayment), _enum_words({
        DirectKongPayment.TWO_FROM_DISCARDER: N_("2 from the discarder"),
        DirectKongPayment.ONE_FROM_DISCARDER: N_("1 from the discarder"),
        DirectKongPayment.TWO_PLUS_ONE_FROM_OTHERS: N_("2 from the discarder, 1 from the others"),
    })),
    Setting("delayed_added_kong_pays", N_("A late added kong earns"), (False, True), _on_off),
    Setting("flower_pig_pays", N_("Three-suit penalty"), (FlowerPigPenalty.SIXTEEN, FlowerPigPenalty.CAP),
            lambda v, texts: texts.t("the cap") if v is FlowerPigPenalty.CAP else "16×"),
    Setting("flower_pig_pays_winners", N_("Three-suit penalty also to winners"), (False, True), _on_off),
    Setting("not_ready_pays_lowest", N_("Not-ready players pay"), (False, True),
            lambda v, texts: texts.t("the lowest wait") if v else texts.t("the highest wait")),
    Setting("dead_wait_counts_as_ready", N_("A wait with no tiles left counts as ready"), (True, False), _on_off),
)
_BY_FIELD = {s.field: s for s in SETTINGS}


PRESET_WORDS = {"chengdu": N_("Chengdu"), "xueliu": N_("bloody river"), "classic": N_("classic")}


def preset_words(name: str | None, texts: Translator) -> str:
    return texts.t(PRESET_WORDS[name]) if name else texts.t("custom")


def describe_rules(rules: RuleSet, base: int, texts: Translator) -> str:
    """This chat's rules in plain words, one setting a line (the text of /rules)."""
    lines = [texts.t("Rules of this chat ({preset}), base stake {base}:",
                     preset=preset_words(rules.preset_name(), texts), base=base)]
    for setting in SETTINGS:
        lines.append(f"• {texts.t(setting.label)}: {setting.words(getattr(rules, setting.field), texts)}")
    return "\n".join(lines)


def settings_keyboard(rules: RuleSet, base: int, texts: Translator) -> InlineKeyboardMarkup:
    rows = [[InlineKeyboardButton(("✓ " if rules.preset_name() == name else "") + preset_words(name, texts),
                                  callback_data=f"st:p:{name}") for name in PRESETS]]
    rows.append([InlineKeyboardButton(texts.t("Base stake: {base}", base=base), callback_data="st:c:base")])
    for setting in SETTINGS:
        value = setting.words(getattr(rules, setting.field), texts)
        rows.append([InlineKeyboardButton(f"{texts.t(setting.label)}: {value}",
                                          callback_data=f"st:c:{setting.field}")])
    return InlineKeyboardMarkup(rows)


def cycled(rules: RuleSet, base: int, field: str) -> tuple[RuleSet, int]:
    """The rules (and base stake) after one press on ``field``'s button."""
    if field == "base":
        index = BASE_STAKES.index(base) if base in BASE_STAKES else -1
        return rules, BASE_STAKES[(index + 1) % len(BASE_STAKES)]
    setting = _BY_FIELD[field]
    current = getattr(rules, field)
    following = setting.values[(setting.values.index(current) + 1) % len(setting.values)]
    return rules.with_changes(**{field: following}), base


def rules_of(stored: dict[str, Any]) -> RuleSet:
    return RuleSet.from_dict(stored)


def stored_rules(rules: RuleSet) -> dict[str, Any]:
    data = rules.to_dict()
    data.pop("base", None)  # the base stake is the chat's own column
    return data


async def may_change(update: Update, context: Context) -> bool:
    """Chat-wide rules and the base stake are the group's admins' (opening a table gives no say)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return False
    return await is_chat_admin(context, chat.id, chat.type, user.id)


async def rules_command(update: Update, context: Context) -> None:
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    texts = await texts_for(update, context)
    stored = await services(context).storage.get_chat(chat.id)
    await message.reply_text(describe_rules(rules_of(stored.rules), stored.base_stake, texts))


def _menu_text(texts: Translator) -> str:
    return texts.t("Table settings. They apply from the next hand dealt; tap a line to change it.")


async def settings_command(update: Update, context: Context) -> None:
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    texts = await texts_for(update, context)
    stored = await services(context).storage.get_chat(chat.id)
    keyboard = settings_keyboard(rules_of(stored.rules), stored.base_stake, texts)
    await message.reply_text(_menu_text(texts), reply_markup=keyboard)


async def settings_press(update: Update, context: Context) -> None:
    query, chat = update.callback_query, update.effective_chat
    if query is None or chat is None or query.data is None:
        return
    texts = await texts_for(update, context)
    storage = services(context).storage
    stored = await storage.get_chat(chat.id)
    rules, base = rules_of(stored.rules), stored.base_stake
    what = query.data[3:]
    if what == "open":
        await query.answer()
        await context.bot.send_message(chat.id, _menu_text(texts), reply_markup=settings_keyboard(rules, base, texts))
        return
    if not await may_change(update, context):
        await query.answer(texts.t("Only a group admin can change this chat's rules and stakes."), show_alert=True)
        return
    kind, _, name = what.partition(":")
    if kind == "p":
        if name not in PRESETS:
            await query.answer(texts.t("That button is out of date."))
            return
        rules = PRESETS[name]
    elif name == "base" or name in _BY_FIELD:
        rules, base = cycled(rules, base, name)
    else:
        await query.answer(texts.t("That button is out of date."))
        return
    await storage.update_chat(chat.id, rules=stored_rules(rules), base_stake=base)
    await query.answer(texts.t("Saved; it applies from the next hand."))
    await edit_query_text(query, _menu_text(texts), settings_keyboard(rules, base, texts))


FEATURE = Feature(
    name="rules",
    handlers=lambda: [
        CommandHandler("rules", rules_command),
        CommandHandler("settings", settings_command),
        CallbackQueryHandler(settings_press, pattern=SETTINGS_PATTERN),
    ],
    commands=(
        Command("rules", N_("This chat's rules in plain words")),
        Command("settings", N_("Change this chat's table settings")),
    ),
)
