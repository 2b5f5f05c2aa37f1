"""``/score``: value a typed hand under this chat's rules, and re-value it as situations toggle.

``/score <hand>`` answers at once; ``/score`` alone asks for the hand with a reply prompt, and
the reply is answered the same way. The answer's buttons (自摸, 杠上花, 杠上炮, 抢杠, 海底)
edit the same message. The hand of each answer is remembered per message (bounded); after a
restart a press re-reads the hand from the first line of the caption, which is its notation.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from telegram import ForceReply, InputMediaPhoto, Message, Update
from telegram.error import BadRequest
from telegram.ext import CallbackQueryHandler, CommandHandler, MessageHandler, filters

from bot.feature import AnyApplication, Command, Context, Feature, Hook
from bot.i18n import LANGUAGES, N_, Translator, translator
from bot.latest_edits import LatestEdits
from bot.messaging import fit_caption, fit_text, is_image, is_not_modified, reply_picture
from bot.ratelimit import STOP_GRACE_SECONDS
from bot.score.answer import TOGGLE_PATTERN, Answer, answer_for, answer_for_text, recover, toggled
from bot.score.memory import MessageKey, MessageMemory, memory
from bot.score.texts import EXAMPLE, error_text
from bot.services import services, texts_for
from engine.rules import RuleSet
from engine.tiles import DescribedHand, HandError, Situation, parse_hand, starts_like_tiles

log = logging.getLogger(__name__)

HANDS_KEY = "xuezhan.score.hands"
EDITS_KEY = "xuezhan.score.edits"
LOCKS_KEY = "xuezhan.score.locks"
MEMORY_LIMIT = 1000
PROMPT = N_("Send me the hand as a reply to this message, for example: {example}")
COMMAND = re.compile(r"^/score(@\w+)?(\s|$)", re.IGNORECASE)


def prompt_texts() -> frozenset[str]:
    """The prompt in every language, to recognise a reply to it even after a restart."""
    return frozenset(translator(code).t(PROMPT, example=EXAMPLE) for code in LANGUAGES)


class _RepliesToPrompt(filters.MessageFilter):
    """A message that answers the bot's /score prompt (other replies are left to other features)."""

    def filter(self, message: Message) -> bool:
        target = message.reply_to_message
        return (
            target is not None
            and target.from_user is not None
            and target.from_user.is_bot
            and (target.text or "") in prompt_texts()
        )


REPLIES_TO_PROMPT = _RepliesToPrompt(name="replies to the /score prompt")


def hands(context: Context) -> MessageMemory[DescribedHand]:
    return memory(context.bot_data, HANDS_KEY, MEMORY_LIMIT)


def message_lock(context: Context, chat_id: int, message_id: int) -> asyncio.Lock:
    """One lock per answer message, so that two quick presses edit it in order."""
    locks: MessageMemory[asyncio.Lock] = memory(context.bot_data, LOCKS_KEY, MEMORY_LIMIT)
    lock = locks.get((chat_id, message_id))
    if lock is None:
        lock = asyncio.Lock()
        locks.put((chat_id, message_id), lock)
    return lock


async def chat_rules(context: Context, chat_id: int) -> tuple[RuleSet, int]:
    """This chat's rules and base stake, as /settings left them."""
    stored = await services(context).storage.get_chat(chat_id)
    return RuleSet.from_dict(stored.rules), stored.base_stake


async def answer_written(update: Update, context: Context, written: str) -> None:
    """Reply to the message with the answer for ``written``, or with a correction."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    texts = await texts_for(update, context)
    rules, base = await chat_rules(context, chat.id)
    try:
        answer = await asyncio.to_thread(answer_for_text, written, rules, base, texts)
    except HandError as error:
        await message.reply_text(fit_text(error_text(error, written, texts)))
        return
    caption = fit_caption(answer.caption) if answer.caption else answer.caption
    sent = await reply_picture(message, answer.photo, caption, answer.keyboard)
    remember(context, sent.chat_id, sent.message_id, answer)


def remember(context: Context, chat_id: int, message_id: int, answer: Answer) -> None:
    if answer.hand is not None:
        hands(context).put((chat_id, message_id), answer.hand)


async def show(message: Message, answer: Answer) -> None:
    """Replace the picture, caption and buttons of one of the bot's answers (only the caption and
    buttons where the chat took it as text: ``reply_picture``)."""
    try:
        if message.photo:
            await message.edit_media(InputMediaPhoto(answer.photo, caption=answer.caption),
                                     reply_markup=answer.keyboard)
        else:
            await message.edit_text(answer.caption or "…", reply_markup=answer.keyboard)
    except BadRequest as error:
        if not is_not_modified(error):
            raise


def prompt(texts: Translator) -> str:
    return texts.t(PROMPT, example=EXAMPLE)


async def score_command(update: Update, context: Context) -> None:
    message = update.effective_message
    if message is None or message.text is None:
        return
    parts = message.text.split(maxsplit=1)
    written = parts[1] if len(parts) > 1 else ""
    replied = message.reply_to_message
    situations = situation_words(written)
    if replied is not None and situations is not None:  # /score (自摸) in reply to someone's hand
        if is_image(replied) and message.from_user is not None:
            from bot.score.photo import score_photo  # (which imports this module)

            await score_photo(replied, message.from_user.id, situations, context, await texts_for(update, context))
            return
        if replied.text and starts_like_tiles(replied.text):
            written = f"{replied.text} {written}"
    if written.strip():
        await answer_written(update, context, written)
        return
    texts = await texts_for(update, context)
    await message.reply_text(prompt(texts), reply_markup=ForceReply(selective=True,
                                                                  input_field_placeholder=EXAMPLE))


def situation_words(text: str | None) -> frozenset[Situation] | None:
    """The situation words written after ``/score`` (``/score 自摸``; none when nothing is), or
    None when the text holds anything else: tiles, or a question."""
    words = COMMAND.sub("", text or "", count=1).strip()
    if not words:
        return frozenset()
    try:
        hand = parse_hand(words)
    except HandError:
        return None
    return hand.situations if not hand.concealed and not hand.melds else None


async def prompt_reply(update: Update, context: Context) -> None:
    message = update.effective_message
    if message is not None and message.text is not None:
        await answer_written(update, context, message.text)


async def toggle(update: Update, context: Context) -> None:
    """A situation button: re-value the hand under the chat's current rules, edit in place."""
    query, chat = update.callback_query, update.effective_chat
    if query is None or query.data is None:
        return
    if chat is None or not isinstance(query.message, Message):  # too old for Telegram to show it
        await query.answer()
        return
    match = TOGGLE_PATTERN.match(query.data)
    assert match is not None
    message = query.message
    texts = await texts_for(update, context)
    async with message_lock(context, chat.id, message.message_id):
        key = (chat.id, message.message_id)
        hand = hands(context).get(key) or recover(message.caption or message.text)
        if hand is None:
            await query.answer(texts.t("This button is no longer active."))
            return
        await query.answer()
        hands(context).put(key, replace(hand, situations=toggled(hand.situations, Situation(match.group(1)))))
    # Shown in the chat's turn, from the hand as it is then: a second toggle meanwhile does not wait.
    context.bot_data[EDITS_KEY].show(key, chat.id, (message, texts))


async def _revalue(app: AnyApplication, key: MessageKey, shown: tuple[Message, Translator]) -> None:
    """The answer for the message's hand as it is now, under the chat's rules (holding its lock)."""
    message, texts = shown
    hand = hands(app).get(key)
    if hand is None:
        return
    rules, base = await chat_rules(app, key[0])
    await show(message, await asyncio.to_thread(answer_for, hand, rules, base, texts))


def redrawn_messages(key: str, edit: Callable[[AnyApplication, MessageKey, Any], Awaitable[None]],
                     what: str) -> tuple[Hook, Hook]:
    """The start and stop hooks of a feature whose answers are redrawn by a ``LatestEdits`` kept
    in ``bot_data[key]``: one sender per message, holding the message's lock."""

    async def on_start(app: AnyApplication) -> None:
        app.bot_data[key] = LatestEdits(app.bot, functools.partial(edit, app),
                                        lambda message, _chat_id: message_lock(app, *message), what)

    async def on_stop(app: AnyApplication) -> None:
        edits = app.bot_data.pop(key, None)
        if edits is not None:
            await edits.close(STOP_GRACE_SECONDS)

    return on_start, on_stop


_ON_START, _ON_STOP = redrawn_messages(EDITS_KEY, _revalue, "score answer")


FEATURE = Feature(
    name="score",
    handlers=lambda: [
        CommandHandler("score", score_command),
        MessageHandler(filters.TEXT & ~filters.COMMAND & REPLIES_TO_PROMPT, prompt_reply),
        CallbackQueryHandler(toggle, pattern=TOGGLE_PATTERN),
    ],
    commands=(Command("score", N_("Value a hand: /score 123m456m789m234p55p")),),
    on_start=_ON_START,
    on_stop=_ON_STOP,
)
