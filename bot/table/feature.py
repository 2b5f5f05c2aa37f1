"""Hosting games in a group: /newgame, the lobby's buttons, the players' buttons, /cancel.

Handlers stay small: they find the table, check who pressed, and hand the decision to the
table's runner (``bot.table.runner``); every callback query gets an answer, a refused press a
short one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Message, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import BadRequest, TelegramError
from telegram.ext import CallbackQueryHandler, ChatMemberHandler, CommandHandler, MessageHandler
from telegram.ext import filters as f

from bot.feature import AnyApplication, Command, Context, Feature
from bot.handlers_basic import help_text
from bot.i18n import N_, Translator, translator
from bot.latest_edits import LatestEdits
from bot.messaging import edit_query_text, is_not_modified
from bot.permissions import is_chat_admin, is_chat_member, sent_as_the_group, signed_id, verified_id
from bot.ratelimit import STOP_GRACE_SECONDS
from bot.services import chat_language, services, texts_for, user_language
from bot.table import callbacks
from bot.table.lobby import lobby_keyboard, lobby_text
from bot.table.presenter import TelegramPresenter
from bot.table.runner import Limits, Refusal, settlement_key
from bot.table.table_rules import TABLE_RULES_PATTERN, table_rules_press
from bot.table.tables import OWED_TICK_SECONDS, JobQueueScheduler, Tables, table_languages
from bot.table.timers import DatabaseScheduler
from bot.topics import in_topic, summary_follows_play, topic_of
from bot.webapp import lobby_link
from engine.rules import RuleSet
from storage import NotFound, StorageError
from storage.models import HandStatus, Player, PlayerKind, Table, TableStatus

log = logging.getLogger(__name__)

TABLES_KEY = "xuezhan.tables"
LOBBY_EDITS_KEY = "xuezhan.lobby_edits"
# A press is answered once the runner has taken or refused it, or after this long, whichever is
# first: the spinner stops at once even while the table's lock or the database is busy.
ANSWER_FIRST_SECONDS = 0.05
REFUSALS = {
    "not_your_seat": N_("This is not your seat."),
    "stale": N_("That button is out of date."),
    "hand_over": N_("This hand is over."),
    "swap_three_only": N_("Pick exactly three tiles."),
    "swap_one_suit": N_("The three tiles must be of one suit."),
}


def tables(context: Context | AnyApplication) -> Tables:
    return context.bot_data[TABLES_KEY]


# --- start-up and shut-down ----------------------------------------------------------------


async def on_start(app: AnyApplication) -> None:
    found = services(app)
    settings = found.settings
    assert app.job_queue is not None, "install python-telegram-bot[job-queue]"
    languages = functools.partial(table_languages, found.storage, settings.lang)
    presenter = TelegramPresenter(app.bot, found.storage, languages, group_interval=settings.group_update_seconds)
    limits = Limits(settings.discard_seconds, settings.claim_seconds, settings.computer_delay)
    scheduler: DatabaseScheduler | None = None
    if found.storage.shared:  # several workers may serve the tables: timers live in the database
        scheduler = DatabaseScheduler(found.storage, lambda timer: live.fire(timer))
        live = Tables(found.storage, presenter, scheduler, limits)
    else:
        live = Tables(found.storage, presenter, JobQueueScheduler(app.job_queue), limits)
    app.bot_data[TABLES_KEY] = live
    app.bot_data[LOBBY_EDITS_KEY] = LatestEdits(app.bot, functools.partial(edit_lobby, app),
                                                lambda _table_id, chat_id: live.chat_lock(chat_id), "lobby of table")
    await live.resume_all()
    if scheduler is not None:  # after the resume is set: a table's watch left due must not take it up first
        scheduler.begin()
    app.job_queue.run_repeating(lambda _: live.retry_owed(), interval=OWED_TICK_SECONDS, name="xz-owed-posts")


async def on_stop(app: AnyApplication) -> None:
    lobby_edits = app.bot_data.pop(LOBBY_EDITS_KEY, None)
    if lobby_edits is not None:
        await lobby_edits.close(STOP_GRACE_SECONDS)
    found = app.bot_data.pop(TABLES_KEY, None)
    if found is not None:
        await found.close()


# --- who may do what -------------------------------------------------------------------------


async def is_manager(context: Context, table: Table, user_id: int) -> bool:
    """The table's creator, a group admin, or a bot admin (XUEZHAN_ADMINS)."""
    return user_id == table.creator_id or await is_chat_admin(context, table.chat_id, ChatType.GROUP, user_id)


async def open_table(context: Context, chat_id: int) -> Table | None:
    found = await services(context).storage.open_tables(chat_id)
    return found[0] if found else None


# --- the lobby ---------------------------------------------------------------------------------


def join_argument(context: Context | AnyApplication, table_id: int) -> str:
    """The signed table id of a "Start me" link: ids are sequential, signatures are not."""
    return signed_id(services(context).settings.token, "join", table_id)


async def render_lobby(context: Context | AnyApplication, table: Table, texts: Translator,
                       asking: str | None = None) -> tuple[str, object]:
    storage = services(context).storage
    chat = await storage.get_chat(table.chat_id)
    players: list[Player | None] = [await storage.get_player(p) if p else None for p in table.seats]
    rules = RuleSet.from_dict(table.rules if table.rules is not None else chat.rules)
    text = lobby_text(table, players, rules, chat.base_stake, texts)
    if asking == "start":
        text += "\n\n" + texts.t("{n} seats are empty. Start with computer players in them?",
                                  n=table.seats.count(None))
    elif asking == "cancel":
        text += "\n\n" + texts.t("Cancel this table?")
    web_link = lobby_link(services(context).settings, context.bot.username, table.id)
    return text, lobby_keyboard(table, context.bot.username, join_argument(context, table.id), texts, asking,
                                web_link)


def refresh_lobby(context: Context, table: Table, asking: str | None = None) -> None:
    """Show ``table``'s lobby again (asking ``asking``) in the group's next turn, without waiting
    for it (``bot.latest_edits``). Without the table feature running there is none to show."""
    edits: LatestEdits | None = context.bot_data.get(LOBBY_EDITS_KEY)
    if edits is not None:
        edits.show(table.id, table.chat_id, asking)


async def edit_lobby(app: AnyApplication, table_id: int, asking: str | None) -> None:
    """The lobby message as the table is now: its seats (and question) while it gathers players,
    then that it started or was cancelled."""
    table = await services(app).storage.get_table(table_id)
    if table.message_id is None:
        return
    texts = await group_texts(app, table.chat_id)
    markup: object = None
    if table.status is TableStatus.VOIDED:
        text = texts.t("Table #{id} is cancelled.", id=table.id)
    elif table.status is TableStatus.LOBBY:
        text, markup = await render_lobby(app, table, texts, asking)
    else:
        text = await started_lobby(app, table, texts)
    try:
        await app.bot.edit_message_text(text, chat_id=table.chat_id, message_id=table.message_id, reply_markup=markup)
    except BadRequest as error:
        if not is_not_modified(error):
            raise


async def started_lobby(context: Context | AnyApplication, table: Table, texts: Translator) -> str:
    """The lobby message once the game started: who sat down, and no buttons."""
    text, _ = await render_lobby(context, table, texts)
    return text + "\n\n" + texts.t("The game has started.")


async def group_texts(context: Context | AnyApplication, chat_id: int) -> Translator:
    return translator(await chat_language(context, chat_id, ChatType.GROUP))


Handler = Callable[[Update, Context], Awaitable[None]]


def one_at_a_time_per_chat(handler: Handler) -> Handler:
    """A chat's lobby changes run one after another (the Application handles updates concurrently)."""

    @functools.wraps(handler)
    async def serialised(update: Update, context: Context) -> None:
        if update.effective_chat is not None:
            async with tables(context).chat_lock(update.effective_chat.id):
                await handler(update, context)

    return serialised


def after_the_lock(context: Context, sending: Coroutine[Any, Any, Any], update: Update | None = None) -> None:
    """Send to the group once the handler has let the chat's lock go.

    A group's messages go in the group's turns (20 a minute), which a busy group may not give
    for a minute. Sent holding the chat's lock, they kept every other press there unanswered as
    long. What the press decided is already stored, so a press meanwhile is answered from it.
    Errors reach the error handlers, as the handler's own would."""
    context.application.create_task(sending, update=update)


@one_at_a_time_per_chat
async def new_game(update: Update, context: Context) -> None:
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    if message is None or user is None or chat is None:
        return
    texts = await texts_for(update, context)
    if chat.type == ChatType.PRIVATE:
        await message.reply_text(texts.t("Start a table in a group: add me to a group and send /newgame there."))
        return
    storage = services(context).storage
    existing = await open_table(context, chat.id)
    if existing is not None and existing.topic_id == topic_of(message):  # its lobby or last result, again
        if existing.status is TableStatus.LOBBY:
            await bring_down_lobby(context, existing, message, texts)
            return
        hands = await storage.table_hands(existing.id)
        if hands and hands[-1].status is not HandStatus.PLAYING:  # between hands
            after_the_lock(context, tables(context).post_settlement_card(hands[-1].id), update)
            return
    if existing is not None:
        await message.reply_text(texts.t("This group already has table #{id}; /cancel it first.", id=existing.id))
        return
    stored = await storage.get_chat(chat.id)
    table = await storage.create_table(chat.id, user.id, topic_of(message))
    await summary_follows_play(storage, stored, table.topic_id)
    known = await storage.get_user(user.id)
    if known is not None and known.started_dm:
        player = await storage.player_for_user(chat.id, user.id, user.full_name)
        table = await storage.set_seat(table.id, 0, player.id)
    text, markup = await render_lobby(context, table, texts)
    sent = await message.reply_text(text, reply_markup=markup)
    await storage.set_table_message(table.id, sent.message_id)


async def bring_down_lobby(context: Context, table: Table, message: Message, texts: Translator) -> None:
    """``/newgame`` while the group's lobby gathers players, scrolled away up the chat or deleted by
    an admin: the lobby is posted again below, and its old message goes (its buttons would be out of
    date). Before, the person was told to /cancel the very table they wanted to join."""
    text, markup = await render_lobby(context, table, texts)
    sent = await message.reply_text(text, reply_markup=markup)
    await services(context).storage.set_table_message(table.id, sent.message_id)
    if table.message_id is not None:
        after_the_lock(context, _delete_quietly(context, table.chat_id, table.message_id))


async def _delete_quietly(context: Context, chat_id: int, message_id: int) -> None:
    with contextlib.suppress(TelegramError):  # deleted already, or too old to delete: it stays
        await context.bot.delete_message(chat_id, message_id)


async def cancel(update: Update, context: Context) -> None:
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    if message is None or user is None or chat is None:
        return
    texts = await texts_for(update, context)
    table = await open_table(context, chat.id)
    if table is None:
        await message.reply_text(texts.t("There is no open table here."))
        return
    if not (sent_as_the_group(update) or await is_manager(context, table, user.id)):
        await message.reply_text(texts.t("Only the table's creator or a group admin can do that."))
        return
    question = (texts.t("Cancel table #{id}? The hand being played is void and its chips are restored.",
                        id=table.id) if table.status is TableStatus.PLAYING
                else texts.t("Cancel table #{id}?", id=table.id))
    await message.reply_text(question, reply_markup=InlineKeyboardMarkup([[
        InlineKeyboardButton(texts.t("Yes, cancel the table"), callback_data=callbacks.cancel_data(table.id, "yes")),
        InlineKeyboardButton(texts.t("Back"), callback_data=callbacks.cancel_data(table.id, "no")),
    ]]))


@one_at_a_time_per_chat
async def cancel_press(update: Update, context: Context) -> None:
    """The answer to /cancel's question: only a manager, only in the table's own group."""
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    texts = await texts_for(update, context)
    parsed = callbacks.parse_cancel(query.data)
    table = await table_or_none(context, parsed[0]) if parsed else None
    if (parsed is None or table is None or not from_chat(query, table.chat_id)
            or table.status not in (TableStatus.LOBBY, TableStatus.PLAYING)):
        await query.answer(texts.t("That button is out of date."))
        return
    if not await is_manager(context, table, user.id):
        await query.answer(texts.t("Only the table's creator or a group admin can do that."), show_alert=True)
        return
    await query.answer()
    if parsed[1] == "no":
        after_the_lock(context, query.edit_message_text(texts.t("The table goes on.")), update)
        return
    await cancel_table(context, table, texts)
    after_the_lock(context, query.edit_message_text(
        texts.t("Table #{id} is cancelled; chips of an unfinished hand are restored.", id=table.id)), update)


async def cancel_table(context: Context, table: Table, texts: Translator) -> None:
    storage = services(context).storage
    await tables(context).void(table.id, "cancelled")
    for hand in await storage.table_hands(table.id):
        if hand.status is HandStatus.PLAYING:
            await storage.void_hand(hand.id, "cancelled")
    await storage.set_table_status(table.id, TableStatus.VOIDED)
    after_the_lock(context, tables(context).clear_buttons(table.id, texts.t("Table #{id} is cancelled.", id=table.id)))
    if table.status is TableStatus.LOBBY:  # a started table's lobby says it started: it stays so
        refresh_lobby(context, table)


async def table_or_none(context: Context, table_id: int) -> Table | None:
    try:
        return await services(context).storage.get_table(table_id)
    except NotFound:
        return None


def from_chat(query: CallbackQuery, chat_id: int, message_id: int | None = None) -> bool:
    """A press counts only from the table's own group (and its own message, when named).

    Table ids are small integers, so a forged ``lb:<id>:join`` from another group must not
    reach a table: Telegram tells which message a press came from, and that cannot be forged.
    """
    message = query.message
    if message is None or message.chat.id != chat_id:
        return False
    return message_id is None or message.message_id == message_id


async def seat_user(context: Context, table: Table, user_id: int, name: str) -> tuple[Table | None, str]:
    """Seat a person at the first empty seat; the key of what went wrong otherwise."""
    storage = services(context).storage
    if table.status is TableStatus.PLAYING:
        return None, N_("The game has already started.")
    if table.status is not TableStatus.LOBBY:  # cancelled, or over
        return None, N_("That table no longer exists.")
    player = await storage.player_for_user(table.chat_id, user_id, name)
    if player.id in table.seats:
        return None, N_("You are already seated.")
    if None not in table.seats:
        return None, N_("The table is full.")
    return await storage.set_seat(table.id, table.seats.index(None), player.id), ""


@one_at_a_time_per_chat
async def lobby_press(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    parsed = callbacks.parse_lobby(query.data)
    texts = await texts_for(update, context)
    if parsed is None:
        await query.answer(texts.t("That button is out of date."))
        return
    table_id, verb = parsed
    storage = services(context).storage
    table = await table_or_none(context, table_id)
    if table is None or not from_chat(query, table.chat_id, table.message_id):
        await query.answer(texts.t("That button is out of date."))
        return
    if table.status is not TableStatus.LOBBY:
        await query.answer(texts.t("The game has already started.") if table.status is TableStatus.PLAYING
                           else texts.t("That button is out of date."))  # cancelled, or over
        return
    if verb == "join":
        known = await storage.get_user(user.id)
        if known is None or not known.started_dm:
            await query.answer(
                texts.t("First open a private chat with me: press “Start me” below, then Start."), show_alert=True
            )
            return
        seated, problem = await seat_user(context, table, user.id, user.full_name)
        if seated is None:
            await query.answer(texts.t(problem))
            return
        await query.answer(texts.t("You are seated."))
        refresh_lobby(context, seated)
    elif verb == "leave":
        player = await storage.player_for_user(table.chat_id, user.id, user.full_name)
        if player.id not in table.seats:
            await query.answer(texts.t("You are not seated."))
            return
        await query.answer()
        refresh_lobby(context, await storage.set_seat(table.id, table.seats.index(player.id), None))
    elif verb == "cpu":
        if None not in table.seats:
            await query.answer(texts.t("The table is full."))
            return
        await query.answer()
        refresh_lobby(context, await tables(context).fill_one_computer(table))
    else:  # start, cancel and their questions: the drastic steps are the opener's (or an admin's)
        if not await is_manager(context, table, user.id):
            await query.answer(texts.t("Only the table's creator or a group admin can do that."), show_alert=True)
            return
        if verb == "back":
            await query.answer()
            refresh_lobby(context, table)
        elif verb == "cancel":
            await query.answer()
            refresh_lobby(context, table, asking="cancel")
        elif verb == "drop":
            await query.answer()
            await cancel_table(context, table, texts)
        elif verb == "start" and None in table.seats:
            if await has_person(context, table, query, texts):
                await query.answer()
                refresh_lobby(context, table, asking="start")
        elif await has_person(context, table, query, texts):
            await start_table(update, context, table, texts)


async def has_person(context: Context, table: Table, query: CallbackQuery, texts: Translator) -> bool:
    storage = services(context).storage
    players = [await storage.get_player(p) for p in table.seats if p is not None]
    if not any(p.user_id for p in players):
        await query.answer(texts.t("At least one person must sit at the table."), show_alert=True)
        return False
    return True


async def start_table(update: Update, context: Context, table: Table, texts: Translator) -> None:
    """Start after the opener agreed to computer players in the empty seats (or none were empty)."""
    query = update.callback_query
    assert query is not None
    await query.answer()
    table = await tables(context).fill_with_computers(table)
    # Said before the hand starts, not in the background: the group may move (a supergroup) once
    # the hand is under way, and the lobby message stays in the old group.
    await edit_query_text(query, await started_lobby(context, table, texts))
    await tables(context).start_hand(table)


@one_at_a_time_per_chat
async def after_hand_press(update: Update, context: Context) -> None:
    """Next hand / End under a settlement card."""
    query = update.callback_query
    if query is None or query.data is None:
        return
    texts = await texts_for(update, context)
    parsed = callbacks.parse_after_hand(query.data)
    if parsed is None:
        await query.answer(texts.t("That button is out of date."))
        return
    await after_hand(update, context, *parsed, texts)


async def after_hand(update: Update, context: Context, table_id: int, hand_id: int, verb: str,
                     texts: Translator) -> None:
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    storage = services(context).storage
    try:
        table = await storage.get_table(table_id)
    except NotFound:
        await query.answer(texts.t("That button is out of date."))
        return
    hands = await storage.table_hands(table.id)
    if (table.status is not TableStatus.PLAYING or not hands or hands[-1].id != hand_id
            or hands[-1].status is HandStatus.PLAYING or not from_chat(query, table.chat_id)):
        await query.answer(texts.t("That button is out of date."))
        return
    players = [await storage.get_player(p) for p in hands[-1].seats]
    people = {p.user_id for p in players if p.user_id is not None and p.kind is not PlayerKind.COMPUTER}
    if not await is_manager(context, table, user.id):
        if user.id not in people:
            await query.answer(texts.t("Only the players at this table can do that."), show_alert=True)
            return
        votes = await tables(context).vote(hand_id, verb, user.id)
        needed = len(people) // 2 + 1
        if votes < needed:
            await query.answer(texts.t("Your vote counts: {votes} of {needed} needed (or the opener decides).",
                                       votes=votes, needed=needed), show_alert=True)
            return
    await query.answer()
    await storage.mark_posted(settlement_key(hand_id))  # the card reached the group: nothing owed
    after_the_lock(context, query.edit_message_reply_markup(None), update)
    await tables(context).finished(table.id)
    if verb == "next":
        last = hands[-1]
        dealer = int(last.result["next_dealer"]) if last.result else last.dealer
        await tables(context).start_hand(table, dealer)
        return
    await storage.set_table_status(table.id, TableStatus.FINISHED)
    await tables(context).clear_buttons(table.id, None)  # the DMs only: no group turn to wait for
    totals = [0] * len(players)
    for hand in hands:
        if hand.status is HandStatus.FINISHED and hand.result:
            for seat, chips in enumerate(hand.result["chips"]):
                totals[seat] += chips
    lines = [texts.tn("Table #{id} is over after {n} hand.", "Table #{id} is over after {n} hands.", len(hands),
                      id=table.id)]
    lines += [f"{p.name}: {t:+d}" for p, t in sorted(zip(players, totals, strict=True), key=lambda x: -x[1])]
    after_the_lock(context, in_topic(lambda topic: context.bot.send_message(
        table.chat_id, "\n".join(lines), message_thread_id=topic), table.topic_id), update)


async def start_join(update: Update, context: Context, argument: str) -> None:
    """``/start join_<table>`` from the lobby's "Start me" button: seat the user right away."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None:
        return
    texts = translator(await user_language(context, user.id))
    table_id = verified_id(services(context).settings.token, "join", argument)
    table = await table_or_none(context, table_id) if table_id is not None else None
    if table is None:
        await message.reply_text(texts.t("That table no longer exists."))
        return
    if not await is_chat_member(context, table.chat_id, user.id):
        await message.reply_text(texts.t("Only members of the table's group can sit at it."))
        return
    seated, problem = await seat_user(context, table, user.id, user.full_name)
    if seated is None:
        await message.reply_text(texts.t(problem))
        return
    await message.reply_text(texts.t("You are seated at table #{id}. Your tiles will come here.", id=table.id))
    refresh_lobby(context, seated)


# --- leaving a hand ----------------------------------------------------------------------------


@one_at_a_time_per_chat
async def leave(update: Update, context: Context) -> None:
    """``/leave``: off the lobby's seat, or mid-hand the seat goes to a computer player."""
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    if message is None or user is None or chat is None:
        return
    texts = await texts_for(update, context)
    table = await open_table(context, chat.id)
    storage = services(context).storage
    player = await storage.player_for_user(chat.id, user.id, user.full_name) if table else None
    if table is None or player is None or player.id not in table.seats:
        await message.reply_text(texts.t("You are not seated."))
        return
    if table.status is TableStatus.LOBBY:
        refresh_lobby(context, await storage.set_seat(table.id, table.seats.index(player.id), None))
        await message.reply_text(texts.t("You left the table."))
        return
    await hand_over_seat(context, message, table, user.id, texts.t("{name} left; the computer plays their seat "
                                                                    "to the end of the hand.", name=player.name), texts)


@one_at_a_time_per_chat
async def kick(update: Update, context: Context) -> None:
    """``/kick`` in reply to a seated player's message (or ``/kick name``): the opener hands that seat to a
    computer player, e.g. for someone who went AFK."""
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    if message is None or user is None or chat is None:
        return
    texts = await texts_for(update, context)
    table = await open_table(context, chat.id)
    if table is None or table.status is not TableStatus.PLAYING:
        await message.reply_text(texts.t("No hand is being played here."))
        return
    if not (sent_as_the_group(update) or await is_manager(context, table, user.id)):
        await message.reply_text(texts.t("Only the table's creator or a group admin can do that."))
        return
    runner = await tables(context).live_runner(table.id)
    target = None
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None:
        target = replied.from_user.id
    elif runner is not None and context.args:
        name = " ".join(context.args).lstrip("@").lower()
        target = next((p.user_id for p in runner.seats if p.user_id is not None and p.name.lower() == name), None)
    seat = runner.seat_of(target) if runner is not None and target is not None else None
    if runner is None or seat is None:
        await message.reply_text(texts.t("Reply to a message of the seated player with /kick, or write /kick "
                                         "and their name."))
        return
    await hand_over_seat(context, message, table, target, texts.t(  # type: ignore[arg-type]
        "{name} was removed by the table's opener; the computer plays their seat to the end of the hand.",
        name=runner.seats[seat].name), texts)


async def hand_over_seat(context: Context, message: Message, table: Table, user_id: int, notice: str,
                         texts: Translator) -> None:
    runner = await tables(context).live_runner(table.id)
    seat = runner.seat_of(user_id) if runner is not None else None
    if runner is None or seat is None or not await runner.hand_to_computer(seat):
        await message.reply_text(texts.t("That seat is already played by the computer."))
        return
    await message.reply_text(notice)


# --- the bot removed from a group, and back --------------------------------------------------------


async def bot_membership(update: Update, context: Context) -> None:
    """Removed mid-hand, the bot finishes the hand in private messages and closes the table; a
    lobby is cancelled. Added back, it says what happened to the tables meanwhile; added to a
    group (or back, with nothing to report), it introduces itself: what it does, where the tiles
    come, and the group's commands."""
    change = update.my_chat_member
    if change is None or change.chat.type not in (ChatType.GROUP, ChatType.SUPERGROUP):
        return  # a private chat, or a channel: nobody plays there, and its readers want no help text
    chat_id = change.chat.id
    status = change.new_chat_member.status
    live = tables(context)
    if status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        async with live.chat_lock(chat_id):
            table = await open_table(context, chat_id)
            if table is None:
                return
            if table.status is TableStatus.LOBBY:
                await live.void(table.id, "the bot was removed from the group")
                await services(context).storage.set_table_status(table.id, TableStatus.VOIDED)
            elif table.id in live.runners:
                live.orphan(table.id, chat_id)
            else:
                await services(context).storage.set_table_status(table.id, TableStatus.FINISHED)
        return
    if change.old_chat_member.status not in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return  # made an admin, or its rights changed: not an arrival
    closed = live.returned(chat_id)
    texts = await group_texts(context, chat_id)
    lines = [texts.t("While I was out of this group, table #{id} finished its hand by private message "
                     "and closed. /newgame opens a new table.", id=table_id) for table_id in closed]
    with contextlib.suppress(TelegramError):
        await context.bot.send_message(chat_id, "\n".join(lines) or help_text(update, context, texts),
                                       link_preview_options=LinkPreviewOptions(is_disabled=True))


# --- a group that becomes a supergroup -----------------------------------------------------------


async def chat_migrated(update: Update, context: Context) -> None:
    """Telegram gave the group a new id: move its books, tables and settings there, atomically.

    Both ids announce it (``migrate_to_chat_id`` in the old chat, ``migrate_from_chat_id`` in
    the new one); the second announcement finds nothing left to move.
    """
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        old, new = message.chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat.id
    else:
        return
    await move_chat(context, old, new)


async def move_chat(context: Context | AnyApplication, old: int, new: int) -> None:
    try:
        moved = await services(context).storage.migrate_chat(old, new)
    except StorageError as error:
        log.error("chat %s became %s but could not be moved: %s", old, new, error)
        return
    if moved:
        log.info("chat %s became supergroup %s: its rows moved", old, new)
    live = context.bot_data.get(TABLES_KEY)
    if live is not None:
        await live.chat_moved(old, new)
    if moved:
        await repost_lobbies(context, new)


async def repost_lobbies(context: Context | AnyApplication, chat_id: int) -> None:
    """A lobby's message stayed in the old group, where nobody can press it: post it again here."""
    storage = services(context).storage
    for table in await storage.open_tables(chat_id):
        if table.status is not TableStatus.LOBBY:
            continue
        texts = await group_texts(context, chat_id)
        text, markup = await render_lobby(context, table, texts)
        try:
            sent = await context.bot.send_message(chat_id, text, reply_markup=markup)
        except TelegramError as error:
            log.warning("lobby %s: could not post it in supergroup %s: %s", table.id, chat_id, error)
            continue
        await storage.set_table_message(table.id, sent.message_id)


# --- the players' buttons ----------------------------------------------------------------------


async def game_press(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    if query is None or user is None or query.data is None:
        return
    # Answer first, then work: a press not settled within ANSWER_FIRST_SECONDS (finding the hand in
    # play, waiting for the table's lock or the database: with several workers each is a round trip
    # behind the worker's other units) is answered at once and goes on; its move is saved and shown
    # when it can be (a late refusal shows only as the DM's buttons, unchanged).
    settling = asyncio.ensure_future(_settle_press(context, user.id, query.data))
    tables(context).keep(settling)
    done, _ = await asyncio.wait({settling}, timeout=ANSWER_FIRST_SECONDS)
    if not done:
        await query.answer()  # what goes wrong later is logged by _settle_press
        return
    said = settling.result()
    await query.answer((await texts_for(update, context)).t(said) if said else None)


async def _settle_press(context: Context, user_id: int, data: str) -> str | None:
    """Make the press's move; the refusal or failure to tell the presser, None when it was made."""
    press = callbacks.parse_game(data)
    try:
        runner = await tables(context).live_runner(press.table_id) if press else None
    except StorageError:
        log.exception("table %s: could not find its hand in play", press.table_id if press else None)
        return N_("Something went wrong; please try again.")
    if press is None or runner is None:
        return N_("This hand is over.")
    refused = None if runner.shared else runner.refusal(user_id, press.seq, press.code)  # shared: may be behind
    if refused is not None:
        return REFUSALS[refused]
    try:
        await runner.press(user_id, press.seq, press.code)
    except Refusal as refusal:
        return REFUSALS[refusal.key]
    except Exception:
        log.exception("table %s: press %s failed", press.table_id, press)
        return N_("Something went wrong; please try again.")
    return None


FEATURE = Feature(
    name="table",
    handlers=lambda: [
        CommandHandler(["newgame", "new"], new_game),
        # the plain words, where the bot reads the group (privacy mode off, or an admin), as 记账 for /keep
        MessageHandler(f.ChatType.GROUPS & f.Regex(r"^\s*(开桌|开局)\s*$"), new_game),
        CommandHandler("cancel", cancel, filters=f.ChatType.GROUPS),
        CommandHandler("leave", leave, filters=f.ChatType.GROUPS),
        CommandHandler("kick", kick, filters=f.ChatType.GROUPS),
        CallbackQueryHandler(lobby_press, pattern=callbacks.LOBBY_PATTERN),
        CallbackQueryHandler(after_hand_press, pattern=callbacks.AFTER_HAND_PATTERN),
        CallbackQueryHandler(cancel_press, pattern=callbacks.CANCEL_PATTERN),
        CallbackQueryHandler(table_rules_press, pattern=TABLE_RULES_PATTERN),
        MessageHandler(f.StatusUpdate.MIGRATE, chat_migrated),
        ChatMemberHandler(bot_membership, ChatMemberHandler.MY_CHAT_MEMBER),
        CallbackQueryHandler(game_press, pattern=callbacks.GAME_PATTERN),
    ],
    commands=(
        Command("newgame", N_("Open a table in this group"), private=False),
        Command("cancel", N_("Cancel this group's table"), private=False),
        Command("leave", N_("Leave the table (a computer plays your seat)"), private=False),
        Command("kick", N_("Hand an absent player's seat to a computer"), private=False),
    ),
    start_payloads={"join": start_join},
    on_start=on_start,
    on_stop=on_stop,
)
