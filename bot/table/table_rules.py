"""A table's own rules: its opener picks them in the lobby, for this table only.

The chat's rules and base stake are its admins' (bot.rules_menu). Whoever opens a table may
still play it under other rules: the lobby's "Table rules" button opens the same grouped menu,
whose presses (``tr:<table>:…``) write the table's rules instead of the chat's. The lobby lists
the table's settings so everyone sees them before sitting down, and nothing changes once the
hand has been dealt. The base stake is not offered: stakes stay the admins' to set.
"""

from __future__ import annotations

import re

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update

from bot.feature import Context
from bot.i18n import Translator
from bot.messaging import edit_query_text
from bot.rules_menu import GROUPS, SETTINGS, ChatRules, group_keyboard, main_keyboard, read_chat_rules, value_keyboard
from bot.services import services, texts_for
from engine.rules import PRESETS, RuleSet
from storage import InvalidWrite, NotFound
from storage.models import Table, TableStatus

TABLE_RULES_PATTERN = re.compile(
    r"^tr:(\d{1,12}):(open|m|chat|house|p:[a-z]{1,12}|g:\d|s:[a-z_0-9]{1,40}|v:[a-z_0-9]{1,40}:\d{1,2})$"
)
_BY_FIELD = {s.field: s for s in SETTINGS if s.field != "base"}
_GROUP_OF = {s.field: i for i, (_, group) in enumerate(GROUPS) for s in group}


def open_data(table_id: int) -> str:
    return f"tr:{table_id}:open"


def stored(rules: RuleSet) -> dict[str, object]:
    """A table's rules as stored: the base stake is the chat's column, never the table's."""
    data = rules.to_dict()
    data.pop("base", None)
    return data


def _text(table: Table, texts: Translator, group: int | None = None) -> str:
    text = texts.t("Rules for table #{id} only, chosen by its opener; they apply when it starts.", id=table.id)
    return text if group is None else f"{text}\n\n【{texts.t(GROUPS[group][0])}】"


def _main(table: Table, rules: ChatRules, texts: Translator) -> InlineKeyboardMarkup:
    prefix = f"tr:{table.id}"
    rows = list(main_keyboard(rules, texts, prefix).inline_keyboard)
    rows.append((InlineKeyboardButton(texts.t("Use this group's current rules"), callback_data=f"{prefix}:chat"),))
    return InlineKeyboardMarkup(rows)


async def _current(context: Context, table: Table) -> ChatRules:
    chat_rules = await read_chat_rules(context, table.chat_id)
    if table.rules is None:
        return chat_rules
    return ChatRules(RuleSet.from_dict(table.rules), chat_rules.base, chat_rules.saved)


async def table_rules_press(update: Update, context: Context) -> None:
    """A press in a table's rules menu (or the lobby's button): the opener's, before the start only."""
    from bot.table.feature import from_chat, refresh_lobby  # feature registers this handler

    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    match = TABLE_RULES_PATTERN.match(query.data)
    storage = services(context).storage
    try:
        table = await storage.get_table(int(match.group(1))) if match else None
    except NotFound:
        table = None
    if match is None or table is None or not from_chat(query, table.chat_id):
        await query.answer(texts.t("That button is out of date."))
        return
    if user.id != table.creator_id:
        await query.answer(texts.t("Only the table's opener chooses its rules; /rules shows the group's."),
                           show_alert=True)
        return
    if table.status is not TableStatus.LOBBY:
        await query.answer(texts.t("The game has already started; its rules are fixed."), show_alert=True)
        return
    current = await _current(context, table)
    prefix = f"tr:{table.id}"
    kind, _, rest = match.group(2).partition(":")
    if kind == "open":
        if not from_chat(query, table.chat_id, table.message_id):
            await query.answer(texts.t("That button is out of date."))
            return
        await query.answer()
        await context.bot.send_message(table.chat_id, _text(table, texts), reply_markup=_main(table, current, texts),
                                       message_thread_id=table.topic_id)
        return
    if kind == "m":
        await query.answer()
        await edit_query_text(query, _text(table, texts), _main(table, current, texts))
        return
    if kind == "g" and int(rest) < len(GROUPS):
        await query.answer()
        await edit_query_text(query, _text(table, texts, int(rest)), group_keyboard(int(rest), current, texts, prefix))
        return
    if kind == "s" and rest in _BY_FIELD:
        await query.answer()
        setting = _BY_FIELD[rest]
        await edit_query_text(query, texts.t("{label}: pick a value", label=texts.t(setting.label)),
                              value_keyboard(setting, current, texts, prefix))
        return
    chosen: RuleSet | None
    if kind == "v":
        field, _, index = rest.rpartition(":")
        if field not in _BY_FIELD or int(index) >= len(_BY_FIELD[field].values):
            await query.answer(texts.t("That button is out of date."))
            return
        chosen = current.rules.with_changes(**{field: _BY_FIELD[field].values[int(index)]})
    elif kind == "p" and rest in PRESETS:
        chosen = PRESETS[rest]
    elif kind == "house" and current.saved is not None:
        chosen = current.saved
    elif kind == "chat":
        chosen = None
    else:
        await query.answer(texts.t("That button is out of date."))
        return
    try:
        table = await storage.set_table_rules(table.id, None if chosen is None else stored(chosen))
    except InvalidWrite:  # the hand was dealt between the read and the write
        await query.answer(texts.t("The game has already started; its rules are fixed."), show_alert=True)
        return
    await query.answer(texts.t("Saved for this table only."))
    current = await _current(context, table)
    if kind == "v":
        group = _GROUP_OF[rest.rpartition(":")[0]]
        await edit_query_text(query, _text(table, texts, group), group_keyboard(group, current, texts, prefix))
    else:
        await edit_query_text(query, _text(table, texts), _main(table, current, texts))
    refresh_lobby(context, table)
