"""/rules and /settings: a chat's rules in plain words, and every table setting behind a button.

Settings belong to the chat and apply from the next hand dealt (a hand keeps the rules it was
dealt under, which its log records). Only a group's admins (and the bot's) may change them, so
only they get the menu; anyone else is told so in one line instead of a keyboard.

The menu fits a phone screen: its first page shows the presets and the setting groups, a group
page shows that group's settings with their values, and a setting opens a small page of its
values to pick from (values are never cycled by repeated taps). A group may save its settings as
its own preset ("保存为本群规则"); the chat's settings are what every new table starts from, and
the saved preset's button brings them back after any experiment.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatType
from telegram.ext import CallbackQueryHandler, CommandHandler

from bot.feature import Command, Context, Feature
from bot.i18n import N_, Translator
from bot.messaging import edit_query_text
from bot.permissions import acts_as_admin
from bot.services import services, texts_for
from bot.topics import topic_of
from engine.rules import (
    PRESETS,
    SETTING_VALUES,
    DirectKongPayment,
    FlowerPigPenalty,
    GameMode,
    KongFlowerPayer,
    LastFour,
    NextDealer,
    PassWinScope,
    RuleSet,
    SelfDrawBonus,
    SwapDirection,
)
from storage.models import TableStatus

SETTINGS_PATTERN = re.compile(
    r"^st:(open|m|save|house|p:[a-z]{1,12}|g:\d|s:[a-z_0-9]{1,40}|v:[a-z_0-9]{1,40}:\d{1,2})$"
)
BASE_STAKES = (1, 2, 5, 10, 20, 50, 100)
GROUP_PRESET_KEY = "group_preset"  # beside the RuleSet fields in a chat's stored rules


@dataclass(frozen=True)
class Setting:
    """One setting: the RuleSet field (or ``base``), its label, its values, and their words."""

    field: str
    label: str
    values: tuple[Any, ...]
    words: Callable[[Any, Translator], str]


def _on_off(value: Any, texts: Translator) -> str:
    return texts.t("on") if value else texts.t("off")


def _enum_words(words: dict[Any, str]) -> Callable[[Any, Translator], str]:
    return lambda value, texts: texts.t(words[value])


def _times(value: Any, texts: Translator) -> str:
    return texts.t("none") if value is None else f"{value}×"


def _setting(field: str, label: str, words: Callable[[Any, Translator], str]) -> Setting:
    return Setting(field, label, SETTING_VALUES[field], words)


_BASE = Setting("base", N_("Base stake"), BASE_STAKES, lambda v, texts: str(v))

GROUPS: tuple[tuple[str, tuple[Setting, ...]], ...] = (
    (N_("Game"), (
        _setting("mode", N_("Mode"), _enum_words({
            GameMode.BLOODY_BATTLE: N_("bloody battle (winners leave)"),
            GameMode.BLOODY_RIVER: N_("bloody river (winners play on)"),
            GameMode.FIRST_WIN: N_("first win ends the hand"),
        })),
        _setting("swap_three", N_("Swap three"), _on_off),
        _setting("swap_direction", N_("Swap direction"), _enum_words({
            None: N_("random each hand"),
            SwapDirection.CLOCKWISE: N_("always clockwise"),
            SwapDirection.ACROSS: N_("always across"),
        })),
        _setting("declare_void", N_("Void suit"), _enum_words({
            True: N_("declared at the start"),
            False: N_("not declared (only the winning hand lacks a suit)"),
        })),
        _setting("next_dealer", N_("Next dealer"), _enum_words({
            NextDealer.FIRST_WINNER: N_("the first winner"),
            NextDealer.ROTATE: N_("the next seat"),
            NextDealer.DISCARDER: N_("the discarder of the first win"),
        })),
        _setting("ai_level", N_("Computer players"), _enum_words({
            "easy": N_("easy"), "normal": N_("normal"), "hard": N_("hard"),
        })),
        _BASE,
    )),
    (N_("Hand values"), (
        _setting("cap", N_("Cap"), _times),
        _setting("self_draw", N_("Self-draw"), _enum_words({
            SelfDrawBonus.ADD_BASE: N_("adds a base"),
            SelfDrawBonus.DOUBLE: N_("doubles"),
            SelfDrawBonus.NONE: N_("no extra"),
        })),
        _setting("all_pungs_258", N_("2-5-8 all pungs (将对)"),
                 lambda v, texts: texts.t("not a pattern") if v is None else f"{v}×"),
        _setting("golden_and_flush_terminals", N_("Golden single wait and flush terminals"), _enum_words({
            True: N_("patterns"), False: N_("not patterns"),
        })),
        _setting("last_tile_bonus", N_("Last tile doubles"), _on_off),
        _setting("last_copy_bonus", N_("Last unseen copy (绝张) doubles"), _on_off),
        _setting("concealed_hand_bonus", N_("Concealed hand doubles"), _on_off),
        _setting("no_terminals_bonus", N_("No ones or nines doubles"), _on_off),
    )),
    (N_("Winning"), (
        _setting("pass_win_scope", N_("After passing a win (过水)"), _enum_words({
            PassWinScope.ANY: N_("no discard win until your next draw"),
            PassWinScope.SAME_TILE: N_("only the same tile is barred"),
            PassWinScope.OFF: N_("no bar"),
        })),
        _setting("last_four", N_("Must win in the last four tiles"), _enum_words({
            LastFour.DRAWS_AND_DISCARDS: N_("self-draws and discards"),
            LastFour.DISCARDS: N_("discards only"),
            LastFour.SELF_DRAWS: N_("self-draws only"),
            LastFour.OFF: N_("off"),
        })),
        _setting("kong_flower_payer", N_("Win on a fed kong's replacement"), _enum_words({
            KongFlowerPayer.EVERYONE: N_("everyone pays"),
            KongFlowerPayer.FEEDER: N_("the feeder pays every share"),
            KongFlowerPayer.FEEDER_ONCE: N_("the feeder pays once, as a discard"),
        })),
        _setting("kong_cannon_transfer", N_("Win on the discard after a kong"), _enum_words({
            True: N_("doubles and takes the kong money"),
            False: N_("doubles only"),
        })),
    )),
    (N_("Kongs"), (
        _setting("direct_kong_payment", N_("Kong on a discard earns"), _enum_words({
            DirectKongPayment.TWO_FROM_DISCARDER: N_("2 from the discarder"),
            DirectKongPayment.ONE_FROM_DISCARDER: N_("1 from the discarder"),
            DirectKongPayment.TWO_PLUS_ONE_FROM_OTHERS: N_("2 from the discarder, 1 from the others"),
        })),
        _setting("delayed_added_kong_pays", N_("A late added kong earns"), _on_off),
    )),
    (N_("Empty wall"), (
        _setting("flower_pig_pays", N_("Three-suit penalty"), _enum_words({
            FlowerPigPenalty.SIXTEEN: N_("16×"),
            FlowerPigPenalty.CAP: N_("the cap"),
            FlowerPigPenalty.NINE: N_("9×"),
        })),
        _setting("flower_pig_pays_winners", N_("Three-suit penalty also to winners"), _on_off),
        _setting("not_ready_pays_lowest", N_("Not-ready players pay"), _enum_words({
            False: N_("the highest wait"), True: N_("the lowest wait"),
        })),
        _setting("dead_wait_counts_as_ready", N_("A wait with no tiles left counts as ready"), _on_off),
    )),
)
SETTINGS: tuple[Setting, ...] = tuple(s for _, group in GROUPS for s in group)
_BY_FIELD = {s.field: s for s in SETTINGS}
_GROUP_OF = {s.field: i for i, (_, group) in enumerate(GROUPS) for s in group}

PRESET_WORDS = {"chengdu": N_("Chengdu"), "xueliu": N_("bloody river"), "classic": N_("classic")}


def preset_words(name: str | None, texts: Translator) -> str:
    return texts.t(PRESET_WORDS[name]) if name else texts.t("custom")


# --- what a chat has stored -------------------------------------------------------------------


@dataclass(frozen=True)
class ChatRules:
    """A chat's settings as stored: the rules, the base stake, and the group's own preset if saved."""

    rules: RuleSet
    base: int
    saved: RuleSet | None = None

    @classmethod
    def read(cls, stored_rules: dict[str, Any], base: int) -> ChatRules:
        saved = stored_rules.get(GROUP_PRESET_KEY)
        return cls(RuleSet.from_dict(stored_rules), base, RuleSet.from_dict(saved) if isinstance(saved, dict) else None)

    def stored(self) -> dict[str, Any]:
        data = self.rules.to_dict()
        data.pop("base", None)  # the base stake is the chat's own column
        if self.saved is not None:
            saved = self.saved.to_dict()
            saved.pop("base", None)
            data[GROUP_PRESET_KEY] = saved
        return data

    def preset_label(self, texts: Translator) -> str:
        if self.saved is not None and self.saved == self.rules.with_changes(base=self.saved.base):
            return texts.t("this group's rules")
        return preset_words(self.rules.preset_name(), texts)


def value_words(setting: Setting, rules: RuleSet, base: int, texts: Translator) -> str:
    return setting.words(base if setting.field == "base" else getattr(rules, setting.field), texts)


def labelled(setting: Setting, words: str, texts: Translator) -> str:
    return texts.t("{label}: {value}", label=texts.t(setting.label), value=words)


# --- /rules -------------------------------------------------------------------------------------


def house_rules_line(rules: RuleSet, texts: Translator) -> str:
    """The settings that differ from the book's defaults, in plain words on one line."""
    changed = [_BY_FIELD[f] for f in rules.changed_fields() if f in _BY_FIELD]
    if not changed:
        return texts.t("This table plays the book's defaults.")
    parts = [labelled(s, value_words(s, rules, 0, texts), texts) for s in changed]
    return texts.t("This table: {settings}", settings=("；" if texts.language == "zh" else "; ").join(parts))


def describe_rules(chat_rules: ChatRules, texts: Translator) -> str:
    """/rules: the non-default settings first, in plain words, then every setting by group."""
    rules, base = chat_rules.rules, chat_rules.base
    lines = [
        texts.t("Rules of this chat ({preset}), base stake {base}:", preset=chat_rules.preset_label(texts), base=base),
        house_rules_line(rules, texts),
    ]
    for title, group in GROUPS:
        lines.append("")
        lines.append(f"【{texts.t(title)}】")
        lines += ["• " + labelled(s, value_words(s, rules, base, texts), texts) for s in group]
    return "\n".join(lines)


# --- the menu -----------------------------------------------------------------------------------


def _main_text(texts: Translator) -> str:
    return texts.t("Table settings. They apply from the next hand dealt; pick a group.")


def _group_text(index: int, texts: Translator) -> str:
    return f"{_main_text(texts)}\n\n【{texts.t(GROUPS[index][0])}】"


def main_keyboard(chat_rules: ChatRules, texts: Translator, prefix: str = "st") -> InlineKeyboardMarkup:
    """The first page: presets (and this group's own), the setting groups, saving as this group's.

    ``prefix`` other than ``st`` is one table's menu (bot.table.table_rules): the same pages, whose
    presses write that table's rules; saving as the group's rules is the admins' menu only.
    """
    current = chat_rules.rules.preset_name()
    rows = [[InlineKeyboardButton(("✓ " if current == name else "") + preset_words(name, texts),
                                  callback_data=f"{prefix}:p:{name}") for name in PRESETS]]
    if chat_rules.saved is not None:
        mine = chat_rules.preset_label(texts) == texts.t("this group's rules")
        rows.append([InlineKeyboardButton(("✓ " if mine else "") + texts.t("this group's rules"),
                                          callback_data=f"{prefix}:house")])
    rows += [[InlineKeyboardButton(texts.t(title) + " ›", callback_data=f"{prefix}:g:{i}")]
             for i, (title, _) in enumerate(GROUPS)]
    if prefix == "st":
        rows.append([InlineKeyboardButton(texts.t("Save as this group's rules"), callback_data="st:save")])
    return InlineKeyboardMarkup(rows)


def group_keyboard(index: int, chat_rules: ChatRules, texts: Translator, prefix: str = "st") -> InlineKeyboardMarkup:
    """One group's settings; a table's menu leaves out the base stake (the chat's, set by admins)."""
    _, group = GROUPS[index]
    rows = [[InlineKeyboardButton(labelled(s, value_words(s, chat_rules.rules, chat_rules.base, texts), texts),
                                  callback_data=f"{prefix}:s:{s.field}")]
            for s in group if prefix == "st" or s.field != "base"]
    rows.append([InlineKeyboardButton("‹ " + texts.t("Back"), callback_data=f"{prefix}:m")])
    return InlineKeyboardMarkup(rows)


def value_keyboard(setting: Setting, chat_rules: ChatRules, texts: Translator,
                   prefix: str = "st") -> InlineKeyboardMarkup:
    current = chat_rules.base if setting.field == "base" else getattr(chat_rules.rules, setting.field)
    rows = [[InlineKeyboardButton(("✓ " if value == current else "") + setting.words(value, texts),
                                  callback_data=f"{prefix}:v:{setting.field}:{i}")]
            for i, value in enumerate(setting.values)]
    rows.append([InlineKeyboardButton("‹ " + texts.t("Back"),
                                      callback_data=f"{prefix}:g:{_GROUP_OF[setting.field]}")])
    return InlineKeyboardMarkup(rows)


def chosen(chat_rules: ChatRules, field: str, index: int) -> ChatRules:
    """The settings after picking value number ``index`` of ``field``."""
    setting = _BY_FIELD[field]
    value = setting.values[index]
    if field == "base":
        return ChatRules(chat_rules.rules, value, chat_rules.saved)
    return ChatRules(chat_rules.rules.with_changes(**{field: value}), chat_rules.base, chat_rules.saved)


async def may_change(update: Update, context: Context) -> bool:
    """Chat-wide rules and the base stake are the group's admins' (opening a table gives no say)."""
    return await acts_as_admin(update, context)


async def read_chat_rules(context: Context, chat_id: int) -> ChatRules:
    stored = await services(context).storage.get_chat(chat_id)
    return ChatRules.read(stored.rules, stored.base_stake)


async def rules_command(update: Update, context: Context) -> None:
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    texts = await texts_for(update, context)
    await message.reply_text(describe_rules(await read_chat_rules(context, chat.id), texts))


def _refusal(texts: Translator) -> str:
    return texts.t("Only a group admin can change this group's settings; /rules shows them.")


async def settings_command(update: Update, context: Context) -> None:
    chat, message = update.effective_chat, update.effective_message
    if chat is None or message is None:
        return
    texts = await texts_for(update, context)
    if not await may_change(update, context):
        await message.reply_text(_refusal(texts))
        return
    keyboard = main_keyboard(await read_chat_rules(context, chat.id), texts)
    await message.reply_text(_main_text(texts), reply_markup=keyboard)


async def settings_press(update: Update, context: Context) -> None:
    query, chat = update.callback_query, update.effective_chat
    if query is None or chat is None or query.data is None:
        return
    texts = await texts_for(update, context)
    if not await may_change(update, context):
        await query.answer(_refusal(texts), show_alert=True)
        return
    chat_rules = await read_chat_rules(context, chat.id)
    what = query.data[3:]
    if what == "open":  # the lobby's Settings button: a fresh menu below the lobby
        await query.answer()
        await context.bot.send_message(chat.id, _main_text(texts), reply_markup=main_keyboard(chat_rules, texts),
                                       message_thread_id=topic_of(query.message))
        return
    kind, _, rest = what.partition(":")
    if kind == "m":
        await query.answer()
        await edit_query_text(query, _main_text(texts), main_keyboard(chat_rules, texts))
    elif kind == "g" and int(rest) < len(GROUPS):
        await query.answer()
        await edit_query_text(query, _group_text(int(rest), texts), group_keyboard(int(rest), chat_rules, texts))
    elif kind == "s" and rest in _BY_FIELD:
        await query.answer()
        setting = _BY_FIELD[rest]
        await edit_query_text(query, texts.t("{label}: pick a value", label=texts.t(setting.label)),
                              value_keyboard(setting, chat_rules, texts))
    elif kind == "v":
        field, _, index = rest.rpartition(":")
        if field not in _BY_FIELD or int(index) >= len(_BY_FIELD[field].values):
            await query.answer(texts.t("That button is out of date."))
            return
        changed = chosen(chat_rules, field, int(index))
        await _save(update, context, changed, texts)
        group = _GROUP_OF[field]
        await edit_query_text(query, _group_text(group, texts), group_keyboard(group, changed, texts))
    elif kind in ("p", "house", "save"):
        if kind == "p" and rest in PRESETS:
            changed = ChatRules(PRESETS[rest], chat_rules.base, chat_rules.saved)
        elif kind == "house" and chat_rules.saved is not None:
            changed = ChatRules(chat_rules.saved, chat_rules.base, chat_rules.saved)
        elif kind == "save":
            changed = ChatRules(chat_rules.rules, chat_rules.base, chat_rules.rules)
        else:
            await query.answer(texts.t("That button is out of date."))
            return
        await _save(update, context, changed, texts, saved_preset=kind == "save")
        await edit_query_text(query, _main_text(texts), main_keyboard(changed, texts))
    else:
        await query.answer(texts.t("That button is out of date."))


async def _save(update: Update, context: Context, chat_rules: ChatRules, texts: Translator,
                saved_preset: bool = False) -> None:
    """Store the settings, say so, and bring any open lobby's rules line up to date."""
    chat, query = update.effective_chat, update.callback_query
    assert chat is not None and query is not None
    await services(context).storage.update_chat(chat.id, rules=chat_rules.stored(), base_stake=chat_rules.base)
    if saved_preset:
        await query.answer(texts.t("Saved as this group's rules; new tables start from them."))
    else:
        await query.answer(texts.t("Saved; it applies from the next hand."))
    if chat.type != ChatType.PRIVATE:
        await _refresh_lobbies(context, chat.id)


async def _refresh_lobbies(context: Context, chat_id: int) -> None:
    """An open lobby shows the chat's rules in a line; redraw it so it never shows old ones."""
    from bot.table.feature import refresh_lobby  # the table feature builds on this module

    for table in await services(context).storage.open_tables(chat_id):
        if table.status is TableStatus.LOBBY:
            refresh_lobby(context, table)


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
