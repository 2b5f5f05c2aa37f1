"""Small, safe ways to send and change what the bot shows.

Telegram answers 400 "message is not modified" when an edit changes nothing; that is not a
failure for us (a repeated press, a coalesced update), so these helpers treat it as success.
Telegram refuses a text over 4096 characters or a caption over 1024, and then the person gets
nothing at all; ``fit_text`` and ``fit_caption`` cut a long answer (one that quotes what was
typed, say) so it always arrives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from telegram import Bot, CallbackQuery, InlineKeyboardMarkup, Message
from telegram.error import BadRequest

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
ELLIPSIS = "…"


def fit(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (Telegram counts UTF-16 code units; so do we)."""
    if len(text.encode("utf-16-le")) // 2 <= limit:
        return text
    cut = text[:limit - 1]
    while len(cut.encode("utf-16-le")) // 2 > limit - 1:
        cut = cut[:-1]
    return cut + ELLIPSIS


def fit_text(text: str) -> str:
    return fit(text, TEXT_LIMIT)


def fit_caption(caption: str) -> str:
    return fit(caption, CAPTION_LIMIT)


def fit_request(data: dict[str, Any]) -> None:
    """Cut a Bot API request's ``text`` and ``caption`` to Telegram's limits, in place.

    The last line of defence, applied to every request on its way out: a feature that forgot to
    fit a long text still gets a (cut) message through instead of a refusal and silence.
    """
    if isinstance(data.get("text"), str):
        data["text"] = fit_text(data["text"])
    if isinstance(data.get("caption"), str):
        data["caption"] = fit_caption(data["caption"])


def is_image(message: Message) -> bool:
    """A photo, or a picture sent as a file (a document with an image type)."""
    return bool(message.photo) or (message.document is not None
                                   and (message.document.mime_type or "").startswith("image/"))


def photos_refused(error: BadRequest) -> bool:
    """Whether Telegram refused a photo because the chat lets its members, and so the bot (unless it
    is an admin), send none."""
    text = error.message.lower()
    return "not enough rights to send photos" in text or "chat_send_photos_forbidden" in text


async def picture_or_text(photo: Callable[[], Awaitable[Message]], text: Callable[[], Awaitable[Message]]) -> Message:
    """Send ``photo()``, or ``text()`` where the chat takes no photos from the bot: every picture the
    bot sends has its facts in words too (the caption), so the chat still gets them."""
    try:
        return await photo()
    except BadRequest as error:
        if not photos_refused(error):
            raise
        return await text()


async def reply_picture(message: Message, photo: bytes, caption: str | None,
                        markup: InlineKeyboardMarkup | None = None) -> Message:
    """``message.reply_photo``, or its caption as text (``picture_or_text``)."""
    return await picture_or_text(lambda: message.reply_photo(photo, caption=caption, reply_markup=markup),
                                 lambda: message.reply_text(caption or "…", reply_markup=markup))


def is_not_modified(error: BadRequest) -> bool:
    return "message is not modified" in error.message.lower()


def message_gone(error: BadRequest) -> bool:
    """Whether an edit failed because someone deleted the message (a DM's owner may, any admin may)."""
    return "message to edit not found" in error.message.lower()


def holds_no_picture(error: BadRequest) -> bool:
    """Whether a caption or picture edit failed because the message is text (``picture_or_text``)."""
    text = error.message.lower()
    return "no caption in the message" in text or "no media in the message" in text


async def edit_query_text(query: CallbackQuery, text: str, markup: InlineKeyboardMarkup | None = None,
                          **kwargs: Any) -> None:
    """Edit the text of the message a button was pressed on; unchanged content is fine.

    A press on the option a menu already shows changes nothing: the update carries the message as
    shown, so such an edit is not sent at all (it would spend one of the chat's sends on a refusal).
    Text with markup (``parse_mode``) is shown without it, so it is always sent."""
    shown = query.message
    if (isinstance(shown, Message) and "parse_mode" not in kwargs and shown.text == fit_text(text)
            and shown.reply_markup == markup):
        return
    try:
        await query.edit_message_text(text, reply_markup=markup, **kwargs)
    except BadRequest as error:
        if not is_not_modified(error):
            raise


async def call_unparsed(bot: Bot, endpoint: str, **params: Any) -> Any:
    """Call a Bot API method and return its answer as Telegram's JSON (a dict, or True).

    ``bot.edit_message_caption`` and the like parse every answer into a ``Message`` (chat, sender,
    photo sizes, keyboard: 0.3-0.6 ms of CPU on the event loop) that a live table's edits never
    read. This goes through the same request path (defaults, the rate limiter, the errors) and
    skips that parse. ``params`` are the method's Bot API parameters, as PTB objects or plain values.
    """
    markup = params.get("reply_markup")
    if isinstance(markup, InlineKeyboardMarkup):
        params["reply_markup"] = _markup_json(markup)
    return await bot._post(endpoint, params)  # PTB's own step before the parse


@lru_cache(maxsize=512)
def _markup_json(markup: InlineKeyboardMarkup) -> dict[str, Any]:
    """A keyboard as the Bot API takes it, made once per keyboard: PTB's ``to_dict`` walks every
    button (~0.2 ms for a hand's 14), and a table's DM sends the same keyboard object (its views
    are memoised) with each edit until the buttons change. Read only."""
    return markup.to_dict()
