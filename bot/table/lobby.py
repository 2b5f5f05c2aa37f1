"""The lobby message: who sits where, this chat's rules in one line, and the table's buttons."""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.i18n import Translator
from bot.rules_menu import house_rules_line, preset_words
from bot.table import callbacks, table_rules
from engine.rules import RuleSet
from storage.models import Player, Table

SEATS = 4


def rules_line(rules: RuleSet, base: int, texts: Translator) -> str:
    name = preset_words(rules.preset_name(), texts)
    cap = str(rules.cap) if rules.cap is not None else texts.t("none")
    return texts.t("Rules: {preset} · base {base} · cap {cap}", preset=name, base=base, cap=cap)


def lobby_text(table: Table, players: Sequence[Player | None], rules: RuleSet, base: int,
               texts: Translator) -> str:
    lines = [texts.t("Sichuan mahjong table #{id}", id=table.id), rules_line(rules, base, texts)]
    if table.rules is not None:  # the opener's rules for this table: everyone sees them before sitting down
        lines += [texts.t("Chosen by the opener for this table only:"), house_rules_line(rules, texts)]
    lines.append("")
    for seat, player in enumerate(players):
        lines.append(f"{seat + 1}. " + (player.name if player else texts.t("(empty)")))
    lines.append("")
    if None in table.seats:
        lines.append(texts.t("Press Join to sit down. Your tiles come by private message."))
    else:
        lines.append(texts.t("The table is full: the opener presses Start."))
    return "\n".join(lines)


def lobby_keyboard(table: Table, bot_username: str, join_argument: str, texts: Translator,
                   asking: str | None = None, web_link: str | None = None) -> InlineKeyboardMarkup:
    """The lobby's buttons; ``asking`` ("start" or "cancel") shows the question before a drastic step.

    ``join_argument`` is the signed table id for the "Start me" deep link (ids are sequential).
    """
    def button(label: str, verb: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(label, callback_data=callbacks.lobby_data(table.id, verb))

    if asking == "start":
        empty = table.seats.count(None)
        return InlineKeyboardMarkup([
            [button(texts.t("Start with {n} computer players", n=empty), "go")],
            [button(texts.t("Wait for people"), "back")],
        ])
    if asking == "cancel":
        return InlineKeyboardMarkup([[button(texts.t("Yes, cancel the table"), "drop"),
                                      button(texts.t("Back"), "back")]])
    start_me = InlineKeyboardButton(
        texts.t("Start me (open a private chat)"), url=f"https://t.me/{bot_username}?start=join_{join_argument}"
    )
    rows = [[button(texts.t("Join"), "join"), button(texts.t("Leave"), "leave")]] if None in table.seats else [
        [button(texts.t("Leave"), "leave")]]
    rows += [
        [button(texts.t("Add computer"), "cpu"), button(texts.t("Start"), "start")] if None in table.seats
        else [button(texts.t("Start"), "start")],
        [InlineKeyboardButton(texts.t("Table rules"), callback_data=table_rules.open_data(table.id)),
         InlineKeyboardButton(texts.t("Settings"), callback_data="st:open"), button(texts.t("Cancel"), "cancel")],
    ]
    if None in table.seats:
        rows.append([start_me])
    if web_link:  # the web table (Mini App direct link; groups cannot show web_app buttons)
        rows.append([InlineKeyboardButton(texts.t("Open the table"), url=web_link)])
    return InlineKeyboardMarkup(rows)
