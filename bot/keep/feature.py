"""/keep (记账): the books of a game played with real tiles, kept by tapping buttons in the group.

A lobby gathers four players (Telegram users pressing "I'm in", or plain names typed after
``/keep`` for friends without Telegram). The session's panel message then records, in a few
taps, wins by discard (one or several winners), self-draws, kongs and the empty-wall checks.
A win's value is a typed hand (a reply to the panel) scored with the chat's rules, or a picked
pattern and roots. Records and their transfers go to the ledger (``storage.add_record``);
"Undo last" books a compensating record. The entry being made (a draft) lives in memory: a
restart loses at most an unfinished entry, never a saved record.
"""

from __future__ import annotations

from typing import Any

from telegram.ext import CallbackQueryHandler, CommandHandler, MessageHandler, filters

from bot.feature import Command, Feature
from bot.i18n import N_
from bot.keep.entry import ReplyToPanel, hand_reply, panel_press
from bot.keep.lobby import LOBBY_PRESS, keep_command, lobby_press
from bot.keep.panel import PRESS


def _handlers() -> list[Any]:
    return [
        CommandHandler("keep", keep_command),
        MessageHandler(filters.ChatType.GROUPS & filters.Regex(r"^\s*记账(\s|$)"), keep_command),
        CallbackQueryHandler(lobby_press, pattern=LOBBY_PRESS),
        CallbackQueryHandler(panel_press, pattern=PRESS),
        MessageHandler(filters.ChatType.GROUPS & filters.REPLY & ReplyToPanel(), hand_reply),
    ]


FEATURE = Feature(
    name="keep",
    handlers=_handlers,
    commands=(Command("keep", N_("Keep the books of a game played with real tiles (记账)"), private=False),),
)
