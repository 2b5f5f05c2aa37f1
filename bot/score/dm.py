"""A private chat never goes unanswered: a typed hand is scored, anything else gets one line of help.

This feature is registered last, so it sees only the private messages no other feature took
(their commands, replies to their prompts, photos). Text that starts like a hand (a number, a
tile character or a meld bracket) is answered exactly as ``/score <text>`` would be, corrections included.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import MessageHandler, filters

from bot.feature import Context, Feature
from bot.score.chat import answer_written
from bot.score.texts import EXAMPLE
from bot.services import texts_for
from engine.tiles import starts_like_tiles


async def unclaimed_private_message(update: Update, context: Context) -> None:
    message = update.effective_message
    if message is None:
        return
    text = message.text or ""
    if text and not text.startswith("/") and starts_like_tiles(text):
        await answer_written(update, context, text)
        return
    texts = await texts_for(update, context)
    await message.reply_text(texts.t("Send me a hand to value it, like {example}; /help lists what else I do.",
                                     example=EXAMPLE))


FEATURE = Feature(
    name="private fallback",
    handlers=lambda: [MessageHandler(filters.ChatType.PRIVATE & filters.UpdateType.MESSAGE & ~filters.StatusUpdate.ALL,
                                     unclaimed_private_message)],
)
