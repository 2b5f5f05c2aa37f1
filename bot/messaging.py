"""Small, safe ways to change what the bot already showed.

Telegram answers 400 "message is not modified" when an edit changes nothing; that is not a
failure for us (a repeated press, a coalesced update), so these helpers treat it as success.
"""

from __future__ import annotations

from typing import Any

from telegram import CallbackQuery, InlineKeyboardMarkup
from telegram.error import BadRequest


def is_not_modified(error: BadRequest) -> bool:
    return "message is not modified" in error.message.lower()


async def edit_query_text(query: CallbackQuery, text: str, markup: InlineKeyboardMarkup | None = None,
                          **kwargs: Any) -> None:
    """Edit the text of the message a button was pressed on; unchanged content is fine."""
    try:
        await query.edit_message_text(text, reply_markup=markup, **kwargs)
    except BadRequest as error:
        if not is_not_modified(error):
            raise
