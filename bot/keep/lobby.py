"""The /keep lobby: four players — Telegram users (I'm in, a reply, a text mention) or plain names."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot.feature import Context
from bot.i18n import Translator
from bot.keep.drafts import Lobby, keeper
from bot.keep.panel import edit_message, send_panel
from bot.permissions import sent_as_the_group
from bot.services import services, texts_for
from bot.topics import summary_follows_play, topic_of
from storage.models import PlayerKind

SEATS = 4
MAX_NAME = 32
# Names are listed with spaces, or with the commas a Chinese keyboard types: 记账 老王，小李、阿张
NAME_SEPARATORS = re.compile(r"[\s,，、;；]+")
LOBBY_PRESS = re.compile(r"^kl:(\d{1,18}):(in|x)$")


def parse_names(words: list[str], me: tuple[str, int],
                known: Sequence[tuple[str, int | None]] = ()) -> list[tuple[str, int | None]]:
    """Players named after /keep: ``known`` Telegram users first, then each word — ``me`` (or 我) for
    the sender, any other word a plain name. Raises ValueError naming the word that cannot be one.
    """
    candidates = [*known, *(me if w.lower() in ("me", "我") else (w, None) for w in words)]
    out: list[tuple[str, int | None]] = []
    for name, user_id in candidates:
        if not name or len(name) > MAX_NAME or name.startswith("@"):
            raise ValueError(name)
        if any(n.lower() == name.lower() or (u is not None and u == user_id) for n, u in out):
            raise ValueError(name)
        out.append((name, user_id))
    return out


def mentioned_users(message: Message) -> tuple[list[tuple[str, int | None]], list[str]]:
    """Telegram users named in a /keep message (the replied-to author, text mentions) and the words left."""
    text = message.text or ""
    users: list[tuple[str, int | None]] = []
    replied = message.reply_to_message
    author = replied.from_user if replied is not None else None
    sender = message.from_user.id if message.from_user is not None else None
    if author is not None and not author.is_bot and author.id != sender:  # replying to oneself names nobody
        users.append((author.first_name[:MAX_NAME], author.id))
    spans = message.parse_entities([MessageEntity.TEXT_MENTION])
    for entity in sorted(spans, key=lambda e: e.offset):
        if entity.user is not None:
            users.append((entity.user.first_name[:MAX_NAME], entity.user.id))
    for shown in spans.values():
        text = text.replace(shown, " ", 1)
    return users, [w for w in NAME_SEPARATORS.split(text) if w][1:]


def lobby_text(lobby: Lobby, texts: Translator) -> str:
    names = ", ".join(name for name, _ in lobby.entries) or "—"
    return texts.t("Scorekeeping for a game with real tiles. Players ({n}/4): {names}\n"
                   "Press “I'm in” to join; plain names can be given with /keep Alice Bob ...",
                   n=len(lobby.entries), names=names)


def lobby_keyboard(lobby_id: int, texts: Translator) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(texts.t("I'm in"), callback_data=f"kl:{lobby_id}:in"),
                                  InlineKeyboardButton(texts.t("Cancel"), callback_data=f"kl:{lobby_id}:x")]])


async def keep_command(update: Update, context: Context) -> None:
    """``/keep [names...]`` (or 记账 in a group): open a lobby, or show the open session's panel."""
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    if message is None or chat is None or user is None:
        return
    texts = await texts_for(update, context)
    if chat.type == ChatType.PRIVATE:
        await message.reply_text(texts.t("Scorekeeping is for groups: use /keep in the group you play with."))
        return
    storage = services(context).storage
    open_now = await storage.open_sessions(chat.id)
    if open_now:
        await message.reply_text(texts.t("A scorekeeping session is already open here."))
        await send_panel(context, open_now[-1], texts)
        return
    if sent_as_the_group(update):  # its opener's presses come from their own account, not the group's
        await message.reply_text(texts.t("Open scorekeeping from your own account, not anonymously: its opener "
                                         "starts it and records with the buttons."))
        return
    known, words = mentioned_users(message)
    try:
        entries = parse_names(words, (user.first_name[:MAX_NAME], user.id), known)
    except ValueError as bad:
        await message.reply_text(texts.t("“{name}” can't be a player: names are 1-32 characters, each player "
                                         "appears once, and Telegram users join with “I'm in”.", name=str(bad)))
        return
    if len(entries) > SEATS:
        await message.reply_text(texts.t("A session has four players; you named {n}.", n=len(entries)))
        return
    found = keeper(context)
    waiting = next(((i, lb) for i, lb in found.lobbies.items() if lb.chat_id == chat.id), None)
    if waiting is not None:
        await add_to_lobby(context, *waiting, known, words, texts, message)
        return
    lobby = Lobby(chat.id, user.id, entries, topic_id=topic_of(message))
    if len(entries) == SEATS:
        await start_session(context, lobby, texts)
        return
    lobby_id, found.next_lobby = found.next_lobby, found.next_lobby + 1
    found.lobbies[lobby_id] = lobby
    sent = await message.reply_text(lobby_text(lobby, texts), reply_markup=lobby_keyboard(lobby_id, texts))
    lobby.message_id = sent.message_id


async def add_to_lobby(context: Context, lobby_id: int, lobby: Lobby, known: list[tuple[str, int | None]],
                       words: list[str], texts: Translator, message: Message) -> None:
    """``/keep 老王`` while the group's lobby waits: the names join that lobby, never a second one."""
    sender = message.from_user
    me = (sender.first_name[:MAX_NAME], sender.id) if sender is not None else ("", 0)
    try:
        added = parse_names(words, me, known)
        entries = parse_names([], me, [*lobby.entries, *added])
    except ValueError as bad:
        await message.reply_text(texts.t("“{name}” can't be a player: names are 1-32 characters, each player "
                                         "appears once, and Telegram users join with “I'm in”.", name=str(bad)))
        return
    if len(entries) > SEATS:
        await message.reply_text(texts.t("A session has four players; you named {n}.", n=len(entries)))
        return
    lobby.entries = entries
    full = len(entries) == SEATS
    if full:
        keeper(context).lobbies.pop(lobby_id, None)
    old_message = lobby.message_id
    if old_message is not None:  # the lobby moves down to the newest message; the old one keeps no buttons
        with contextlib.suppress(TelegramError):
            await context.bot.edit_message_text(lobby_text(lobby, texts), chat_id=lobby.chat_id,
                                                message_id=old_message, reply_markup=None)
    if full:
        await start_session(context, lobby, texts)
        return
    sent = await message.reply_text(lobby_text(lobby, texts), reply_markup=lobby_keyboard(lobby_id, texts))
    lobby.message_id = sent.message_id


async def lobby_press(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    match = LOBBY_PRESS.match(query.data)
    assert match is not None
    lobby_id, what = int(match[1]), match[2]
    found = keeper(context)
    lobby = found.lobbies.get(lobby_id)
    pressed_in = (query.message.chat.id, query.message.message_id) if query.message is not None else None
    if lobby is None or pressed_in != (lobby.chat_id, lobby.message_id):
        # Only the lobby's own message seats anyone: a press forged in another chat is stale here.
        await query.answer(texts.t("This button is no longer active."))
        return
    if what == "x":
        if user.id != lobby.creator_id:
            await query.answer(texts.t("Only whoever opened it can cancel it."), show_alert=True)
            return
        found.lobbies.pop(lobby_id, None)
        await query.answer()
        await edit_message(query.message, texts.t("Scorekeeping cancelled."), None)
        return
    if any(uid == user.id for _, uid in lobby.entries):
        await query.answer(texts.t("You are already in."))
        return
    name = user.first_name
    if any(n.lower() == name.lower() for n, _ in lobby.entries):
        name = user.full_name if user.full_name.lower() != name.lower() else f"{name} ({user.id})"
    lobby.entries.append((name[:MAX_NAME], user.id))
    full = len(lobby.entries) == SEATS
    if full:  # before any await: a press arriving meanwhile finds the lobby closed
        found.lobbies.pop(lobby_id, None)
    await query.answer(texts.t("You are in."))
    if full:
        await edit_message(query.message, lobby_text(lobby, texts), None)
        await start_session(context, lobby, texts)
    else:
        await edit_message(query.message, lobby_text(lobby, texts), lobby_keyboard(lobby_id, texts))


async def start_session(context: Context, lobby: Lobby, texts: Translator) -> None:
    """Seat the lobby's four players in a new session, unless one opened meanwhile (then show that)."""
    storage = services(context).storage
    async with keeper(context).chat_lock(lobby.chat_id):
        open_now = await storage.open_sessions(lobby.chat_id)
        if open_now:
            await context.bot.send_message(lobby.chat_id, texts.t("A scorekeeping session is already open here."),
                                           message_thread_id=lobby.topic_id)
            await send_panel(context, open_now[-1], texts)
            return
        players = []
        for name, user_id in lobby.entries:
            if user_id is None:
                players.append(await storage.named_player(lobby.chat_id, name, PlayerKind.GUEST))
            else:
                players.append(await storage.player_for_user(lobby.chat_id, user_id, name))
        session = await storage.start_session(lobby.chat_id, [p.id for p in players], lobby.creator_id,
                                              lobby.topic_id)
        await summary_follows_play(storage, await storage.get_chat(lobby.chat_id), lobby.topic_id)
    await send_panel(context, session, texts)
