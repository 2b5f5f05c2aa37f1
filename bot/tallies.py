"""Who is up and who is down: /balance, /top, /today, /history, /stats, and the daily summary.

Every figure comes from the ledger through storage (hosted hands and scorekept records alike).
Computer players are ranked apart from people: a leaderboard or a chart of the day lists the
people, and the computers follow on a line of their own.
The daily summary is a repeating JobQueue job that asks storage which chats are due
(``chats_due_summary``): the schedule lives in the database, so a summary missed while the bot
was down is posted once when it comes back. "Now" is this module's ``now()``, which tests
replace (monkeypatch) to simulate the time of day.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError
from telegram.ext import CommandHandler

from bot.feature import AnyApplication, Command, Context, Feature
from bot.i18n import N_, Translator, supported, translator
from bot.keep.words import record_words, value_words
from bot.messaging import picture_or_text, reply_picture
from bot.permissions import acts_as_admin
from bot.services import services, texts_for
from bot.table.feature import move_chat
from bot.topics import in_topic, topic_of
from bot.when import read_clock, read_time_zone, zone_label
from rendering.models import MAX_TALLY_ENTRIES, TallyEntry
from storage import days
from storage.models import DayTally, DueSummary, HandResult, PlayerKind, PlayerStats, PlayerTotal

log = logging.getLogger(__name__)

SUMMARY_JOB = "daily-summaries"
CHECK_SECONDS = 60.0
CAPTION_LIMIT = 1000  # Telegram allows 1024 characters of caption
HISTORY_LIMIT = 10
TOP_LIMIT = 10


def now() -> datetime:
    """The current time, aware, in UTC (looked up at each use, so a test can replace it)."""
    return datetime.now(UTC)


def signed(n: int) -> str:
    return f"{n:+d}"


def tally_lines(lines: Sequence[PlayerTotal], computers: frozenset[int] = frozenset(),
                texts: Translator | None = None) -> list[str]:
    """A line per person, then the computer players together on one line of their own."""
    out = [f"• {t.name}: {signed(t.net)}" for t in lines if t.player_id not in computers]
    if texts is not None:
        out += computer_line(lines, computers, texts)
    return out


def computer_line(lines: Sequence[PlayerTotal], computers: frozenset[int], texts: Translator) -> list[str]:
    bots = [f"{t.name} {signed(t.net)}" for t in lines if t.player_id in computers]
    return [texts.t("Computer players (not ranked): {list}", list=", ".join(bots))] if bots else []


async def computer_ids(context: Context, chat_id: int) -> frozenset[int]:
    players = await services(context).storage.players(chat_id)
    return frozenset(p.id for p in players if p.kind is PlayerKind.COMPUTER)


def caption(head: str, lines: Sequence[str]) -> str:
    """A header and as many lines as fit in a photo caption."""
    out = head
    for line in lines:
        if len(out) + len(line) + 3 > CAPTION_LIMIT:
            return out + "\n…"
        out += "\n" + line
    return out


def chart_entries(lines: Sequence[PlayerTotal]) -> list[TallyEntry]:
    """The bars of a tally chart; past the chart's limit, the biggest winners and losers."""
    chosen = list(lines)
    if len(chosen) > MAX_TALLY_ENTRIES:
        half = MAX_TALLY_ENTRIES // 2
        chosen = chosen[:half] + chosen[-half:]
    return [TallyEntry(t.name, t.net) for t in chosen]


def tally_picture(tally: DayTally, title: str, computers: frozenset[int] = frozenset()) -> bytes:
    """The day's chart of people; computer players are left to the caption's line of their own."""
    from rendering import encode_png, render_tally_chart  # Pillow loads with the first picture

    people = [t for t in tally.lines if t.player_id not in computers]
    return encode_png(render_tally_chart(chart_entries(people), title=title, subtitle=tally.day.isoformat()))


async def _local_today(context: Context, chat_id: int) -> tuple[date, ZoneInfo]:
    chat = await services(context).storage.get_chat(chat_id)
    zone = days.zone(chat.timezone)
    return days.local_date(now(), zone), zone


def _in_group(update: Update) -> bool:
    return update.effective_chat is not None and update.effective_chat.type != ChatType.PRIVATE


async def _groups_only(update: Update, context: Context) -> bool:
    """Tallies belong to a group; in a private chat say so and stop."""
    if _in_group(update):
        return True
    message = update.effective_message
    if message is not None:
        texts = await texts_for(update, context)
        await message.reply_text(texts.t("Chips are counted per group: use this command in your group."))
    return False


# --- whose balance ---------------------------------------------------------------------------


async def whose(update: Update, context: Context, args: Sequence[str]) -> tuple[str, int | None] | None:
    """(name, player id) of the player meant: a user mentioned by name (a text mention), a name
    typed after the command, the author of the replied-to message, or the sender. The id is None
    for a user who never moved a chip here; None altogether for a name nobody here has.
    """
    message, user, chat = update.effective_message, update.effective_user, update.effective_chat
    assert message is not None and user is not None and chat is not None
    players = await services(context).storage.players(chat.id)
    if args and not any(e.type == MessageEntity.TEXT_MENTION for e in message.entities):
        wanted = " ".join(args).strip().lstrip("@").lower()
        named = next((p for p in players if p.name.lower() == wanted), None)
        return None if named is None else (named.name, named.id)
    target = user
    replied = message.reply_to_message
    mentions = [e.user for e in message.entities if e.type == MessageEntity.TEXT_MENTION and e.user]
    if mentions:
        target = mentions[0]
    elif replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
        target = replied.from_user
    found = next((p for p in players if p.user_id == target.id), None)
    return (found.name, found.id) if found is not None else (target.first_name, None)


async def balance_command(update: Update, context: Context) -> None:
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not await _groups_only(update, context):
        return
    texts = await texts_for(update, context)
    meant = await whose(update, context, context.args or [])
    if meant is None:
        await message.reply_text(texts.t("No player called “{name}” has played in this chat.",
                                         name=" ".join(context.args or [])))
        return
    name, player_id = meant
    chips = await services(context).storage.balance(chat.id, player_id) if player_id is not None else 0
    await message.reply_text(texts.t("{name}: {chips} chips in this chat.", name=name, chips=signed(chips)))


async def top_command(update: Update, context: Context) -> None:
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not await _groups_only(update, context):
        return
    texts = await texts_for(update, context)
    storage = services(context).storage
    today, _ = await _local_today(context, chat.id)
    computers = await computer_ids(context, chat.id)
    ask = TOP_LIMIT + len(computers)  # computers are listed apart, so the ranking still has TOP_LIMIT people
    ever = await storage.leaderboard(chat.id, limit=ask)
    month = await storage.leaderboard(chat.id, since=today.replace(day=1), limit=ask)
    if not ever:
        await message.reply_text(texts.t("No chips have moved in this chat yet."))
        return

    def ranked(board: Sequence[PlayerTotal]) -> list[str]:
        people = [t for t in board if t.player_id not in computers][:TOP_LIMIT]
        return [f"{i}. {t.name}: {signed(t.net)}" for i, t in enumerate(people, 1)]

    lines = [texts.t("Leaderboard, all time:"), *(ranked(ever) or [texts.t("(no play yet)")])]
    lines += computer_line(ever, computers, texts)
    lines += ["", texts.t("This month ({month}):", month=today.strftime("%Y-%m"))]
    lines += ranked(month) or [texts.t("(no play yet)")]
    lines += computer_line(month, computers, texts)
    await message.reply_text("\n".join(lines))


async def today_command(update: Update, context: Context) -> None:
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not await _groups_only(update, context):
        return
    texts = await texts_for(update, context)
    today, _ = await _local_today(context, chat.id)
    tally = await services(context).storage.daily_tally(chat.id, today)
    if not tally.played:
        await message.reply_text(texts.t("No chips have moved here today ({day}).", day=today.isoformat()))
        return
    head = texts.t("Today's tally ({day}):", day=today.isoformat())
    computers = await computer_ids(context, chat.id)
    picture = tally_picture(tally, texts.t("Today's tally"), computers)
    await reply_picture(message, picture, caption(head, tally_lines(tally.lines, computers, texts)))


# --- history -------------------------------------------------------------------------------------


def history_line(item: HandResult, zone: ZoneInfo, texts: Translator) -> str:
    """``11-29 20:15  hosted hand #3: Alice (清一色, 1 root: 8×): +16`` — a hand or a record, and its chips."""
    when = item.at.astimezone(zone).strftime("%m-%d %H:%M")
    result = item.result or {}
    names = result.get("names") or []
    try:
        if item.kind == "hand":
            wins = [f"{names[w['seat']]} ({value_words(w['score'], texts)})" for w in result.get("wins") or []]
            what = texts.t("hosted hand #{id}: {wins}", id=item.id, wins=", ".join(wins) or texts.t("no win"))
        else:
            what = record_words(result, names, texts)
    except (IndexError, KeyError, TypeError):  # an older result without names: say what it was
        what = texts.t("hand #{id}", id=item.id)
    return f"{when}  {what}: {signed(item.net)}"


async def history_command(update: Update, context: Context) -> None:
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None or not await _groups_only(update, context):
        return
    texts = await texts_for(update, context)
    meant = await whose(update, context, context.args or [])
    storage = services(context).storage
    items = await storage.recent_hands(chat.id, meant[1], HISTORY_LIMIT) if meant and meant[1] is not None else []
    if meant is None or not items:
        name = meant[0] if meant else " ".join(context.args or [])
        await message.reply_text(texts.t("No hands recorded for {name} in this chat yet.", name=name))
        return
    _, zone = await _local_today(context, chat.id)
    lines = [texts.t("Last hands of {name}:", name=meant[0])] + [history_line(i, zone, texts) for i in items]
    await message.reply_text("\n".join(lines))


# --- a person's own figures ------------------------------------------------------------------------


def stats_lines(heading: str, stats: PlayerStats, texts: Translator) -> list[str]:
    """Three short lines: the heading, the hands and how they went, the money of them."""
    if not stats.hands and not stats.net:
        return [heading, texts.t("No hands yet.")]
    return [
        heading,
        texts.t("Hands {hands} · wins {wins} (self-drawn {self_draws}) · deal-ins {deal_ins}",
                hands=stats.hands, wins=stats.wins, self_draws=stats.self_draws, deal_ins=stats.deal_ins),
        texts.t("Biggest win {biggest} · flower pig {pigs}× (paid {pig_chips}) · net {net}",
                biggest=stats.biggest_win, pigs=stats.flower_pigs, pig_chips=stats.flower_pig_chips,
                net=signed(stats.net)),
    ]


async def stats_command(update: Update, context: Context) -> None:
    """``/stats``: your figures in this chat and over every chat; in a group also for a named,
    mentioned or replied-to player. In a private chat: over every chat."""
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    if message is None or chat is None or user is None:
        return
    texts = await texts_for(update, context)
    storage = services(context).storage
    lines: list[str] = []
    if _in_group(update):
        meant = await whose(update, context, context.args or [])
        if meant is None:
            await message.reply_text(texts.t("No player called “{name}” has played in this chat.",
                                             name=" ".join(context.args or [])))
            return
        name, player_id = meant
        here = await storage.player_stats([player_id] if player_id is not None else [])
        lines += stats_lines(texts.t("{name} in this chat:", name=name), here, texts)
        player = await storage.get_player(player_id) if player_id is not None else None
        asked_for_self = not context.args and message.reply_to_message is None
        user_id = player.user_id if player is not None else user.id if asked_for_self else None
    else:
        name, user_id = user.first_name, user.id
    if user_id is not None:
        everywhere = await storage.player_stats([p.id for p in await storage.user_players(user_id)])
        if lines:
            lines.append("")
        lines += stats_lines(texts.t("{name} in every chat:", name=name), everywhere, texts)
    await message.reply_text("\n".join(lines))


# --- the chat's summary time and time zone -----------------------------------------------------


async def summary_command(update: Update, context: Context) -> None:
    """``/summary`` shows when the daily summary is posted; ``/summary 22:30`` changes it (admins)."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    texts = await texts_for(update, context)
    storage = services(context).storage
    stored = await storage.get_chat(chat.id)
    if not context.args:
        await message.reply_text(texts.t("The daily summary is posted at {time} ({zone}). Change it with "
                                         "/summary HH:MM and /timezone Area/City.",
                                         time=stored.summary_time, zone=zone_label(stored.timezone)))
        return
    if not await acts_as_admin(update, context):
        await message.reply_text(texts.t("Only group admins can change this."))
        return
    written = "".join(context.args)
    try:
        at = read_clock(written)
    except days.CalendarError:
        await message.reply_text(texts.t("“{text}” is not a time: write HH:MM between 00:00 and 23:59, "
                                         "e.g. /summary 22:30.", text=written))
        return
    when = at.strftime("%H:%M")
    await storage.update_chat(chat.id, summary_time=when, summary_topic_id=topic_of(message))
    await message.reply_text(texts.t("The daily summary will be posted at {time} ({zone}).", time=when,
                                     zone=zone_label(stored.timezone)))


async def timezone_command(update: Update, context: Context) -> None:
    """``/timezone Europe/Berlin`` (admins): the zone of this chat's days and summary."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    texts = await texts_for(update, context)
    storage = services(context).storage
    stored = await storage.get_chat(chat.id)
    if not context.args:
        await message.reply_text(texts.t("This chat's time zone is {zone}. Change it with /timezone Area/City, "
                                         "e.g. /timezone Europe/Berlin.", zone=zone_label(stored.timezone)))
        return
    if not await acts_as_admin(update, context):
        await message.reply_text(texts.t("Only group admins can change this."))
        return
    written = " ".join(context.args)
    try:
        name = read_time_zone(written)
    except days.CalendarError:
        await message.reply_text(texts.t("“{text}” is not a time zone I know: use a name such as Asia/Shanghai "
                                         "or Europe/Berlin, or an offset such as UTC+8.", text=written))
        return
    await storage.update_chat(chat.id, timezone=name)
    await message.reply_text(texts.t("Time zone set to {zone}; days and the daily summary ({time}) follow it.",
                                     zone=zone_label(name), time=stored.summary_time))


# --- the daily summary job ---------------------------------------------------------------------


async def post_due_summaries(app: AnyApplication) -> int:
    """Post the day's tally in every chat whose summary time has passed; the number posted.

    Several workers tick at once: each chat's summary is posted under the chat's lock across
    workers (``storage.chat_lock``), by the first that finds it still unposted."""
    storage = services(app).storage
    posted = 0
    for due in await storage.chats_due_summary(now()):
        async with storage.chat_lock(due.chat.id):
            last = (await storage.get_chat(due.chat.id)).last_summary_date
            if last is not None and last >= due.day:
                continue  # another worker posted it meanwhile
            posted += await _post_summary(app, due)
    return posted


async def _post_summary(app: AnyApplication, due: DueSummary) -> int:
    """One chat's summary of one day, then marked posted; 1 if a picture went out."""
    found = services(app)
    storage = found.storage
    tally = await storage.daily_tally(due.chat.id, due.day)
    texts = translator(supported(due.chat.language) or found.settings.lang)
    chat_id = due.chat.id
    posted = 0
    if tally.played:
        head = texts.t("Tally of the day ({day}):", day=due.day.isoformat())
        players = await storage.players(chat_id)
        computers = frozenset(p.id for p in players if p.kind is PlayerKind.COMPUTER)
        picture = tally_picture(tally, texts.t("Tally of the day"), computers)
        text = caption(head, tally_lines(tally.lines, computers, texts))

        async def post(chat: int, topic: int | None) -> Message:
            return await picture_or_text(
                lambda: app.bot.send_photo(chat, picture, caption=text, message_thread_id=topic),
                lambda: app.bot.send_message(chat, text, message_thread_id=topic))

        try:
            try:
                await in_topic(lambda topic: post(chat_id, topic), due.chat.summary_topic_id)
            except ChatMigrated as moved:  # the group became a supergroup: move it, post there
                await move_chat(app, chat_id, moved.new_chat_id)
                chat_id = moved.new_chat_id
                await post(chat_id, None)
            posted = 1
        except (Forbidden, BadRequest) as error:  # removed from the group: don't retry every minute
            log.warning("daily summary for chat %s not posted: %s", chat_id, error)
        except TelegramError as error:  # one chat's trouble never stops another's summary
            log.warning("daily summary for chat %s postponed: %s", chat_id, error)
            return 0
    await storage.mark_summary_posted(chat_id, due.day)
    return posted


async def _summary_tick(context: Context) -> None:
    try:
        await post_due_summaries(context.application)
    except TelegramError as error:  # Telegram unreachable: the next tick tries again
        log.warning("daily summaries postponed: %s", error)


async def on_start(app: AnyApplication) -> None:
    """Check every minute, and at once: a summary missed while the bot was down goes out now."""
    assert app.job_queue is not None, "install python-telegram-bot[job-queue]"
    app.job_queue.run_repeating(_summary_tick, interval=CHECK_SECONDS, first=0, name=SUMMARY_JOB)


async def on_stop(app: AnyApplication) -> None:
    if app.job_queue is not None:
        for job in app.job_queue.get_jobs_by_name(SUMMARY_JOB):
            job.schedule_removal()


def _handlers() -> list[Any]:
    return [
        CommandHandler("balance", balance_command),
        CommandHandler("top", top_command),
        CommandHandler("today", today_command),
        CommandHandler("history", history_command),
        CommandHandler("stats", stats_command),
        CommandHandler("summary", summary_command),
        CommandHandler("timezone", timezone_command),
    ]


FEATURE = Feature(
    name="tallies",
    handlers=_handlers,
    commands=(
        Command("balance", N_("Your chips here (or a named or replied-to player's)"), private=False),
        Command("top", N_("Leaderboard: all time and this month"), private=False),
        Command("today", N_("Today's tally as a chart"), private=False),
        Command("history", N_("Your last hands and their results"), private=False),
        Command("stats", N_("Your figures: hands, wins, deal-ins, biggest win, flower pigs")),
        Command("summary", N_("When the daily tally is posted; /summary 22:30 changes it"), private=False),
        Command("timezone", N_("This chat's time zone; /timezone Europe/Berlin changes it"), private=False),
    ),
    on_start=on_start,
    on_stop=on_stop,
)
